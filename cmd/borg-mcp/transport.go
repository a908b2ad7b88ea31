package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxMCPLine is the longest line borg-mcp reads as one message. A lesson
// is at most memfs.MaxLessonBytes; a request carrying one, JSON-escaped,
// fits many times over.
const maxMCPLine = 4 << 20

// JSON-RPC's error codes for a message that is not one.
const (
	rpcParseError     = -32700
	rpcInvalidRequest = -32600
)

// guardedStdio is the MCP server's transport: newline-delimited JSON-RPC
// over in and out, as the SDK's stdio transport, except that a line that is
// not a JSON-RPC message (not JSON, over maxLine bytes, not a request,
// notification or response, a batch) is answered with a JSON-RPC error
// (parse error or invalid request, id null unless the line names one) and
// dropped, and the server keeps serving. The SDK ends the session on such a
// line; an agent's server must not die of one bad message.
//
// At the end of in, the requests already passed on are answered before
// the server sees the end: a client that writes its requests and closes
// its end (a script piping into borg mcp) gets every answer.
func guardedStdio(in io.Reader, out io.Writer, maxLine int) mcp.Transport {
	pr, pw := io.Pipe()
	w := &lockedWriter{w: out, pending: map[string]int{}}
	w.idle = sync.NewCond(&w.mu)
	good := &requestCounter{w: pw, lw: w}
	go func() {
		err := screenLines(in, good, w, maxLine)
		if err == nil {
			w.waitIdle()
		}
		_ = pw.CloseWithError(err)
	}()
	// The SDK's own limit never applies: every line it reads was measured.
	return &mcp.IOTransport{Reader: pr, Writer: nopWriteCloser{w}, MaxLineLength: -1}
}

// lockedWriter serialises writes: the SDK's replies and the guard's errors
// go to one stream, one whole line per write. It counts the requests
// passed on that are not answered yet (pending, by id).
type lockedWriter struct {
	mu      sync.Mutex
	w       io.Writer
	pending map[string]int
	idle    *sync.Cond
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var reply struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if json.Unmarshal(p, &reply) == nil && reply.Method == "" {
		l.done(idKey(reply.ID))
	}
	return l.w.Write(p)
}

// done notes that request id needs no answer any more (answered, or
// cancelled by the client); l.mu is held.
func (l *lockedWriter) done(id string) {
	if l.pending[id] > 0 {
		if l.pending[id]--; l.pending[id] == 0 {
			delete(l.pending, id)
		}
		l.idle.Broadcast()
	}
}

// sent notes a request passed on to the server.
func (l *lockedWriter) sent(id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.pending[id]++
}

// cancelled notes a request the client cancelled: the server does not
// answer it.
func (l *lockedWriter) cancelled(id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.done(id)
}

// idKey is a JSON-RPC id as one string whatever its spelling ("1", "1.0"
// and "1e0" are one id; a string id stays apart from a number), or "" for
// no valid id.
func idKey(raw json.RawMessage) string {
	var v any
	if len(raw) == 0 || json.Unmarshal(raw, &v) != nil {
		return ""
	}
	switch v := v.(type) {
	case string:
		return strconv.Quote(v)
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
	return ""
}

// waitIdle returns once every request passed on has been answered.
func (l *lockedWriter) waitIdle() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for len(l.pending) > 0 {
		l.idle.Wait()
	}
}

// requestCounter passes lines on to w and notes each request (a message
// with a method and an id) with lw, so the end of input waits for its
// answer.
type requestCounter struct {
	w  io.Writer
	lw *lockedWriter
}

func (r *requestCounter) Write(p []byte) (int, error) {
	var req struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			RequestID json.RawMessage `json:"requestId"`
		} `json:"params"`
	}
	if json.Unmarshal(p, &req) == nil {
		switch {
		case req.Method == "notifications/cancelled":
			r.lw.cancelled(idKey(req.Params.RequestID))
		case req.Method != "" && idKey(req.ID) != "":
			r.lw.sent(idKey(req.ID))
		}
	}
	return r.w.Write(p)
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// screenLines copies each line of in that is a JSON-RPC message to good
// and answers every other line on bad. It returns nil at the end of in, or
// the error reading or forwarding.
func screenLines(in io.Reader, good io.Writer, bad io.Writer, maxLine int) error {
	r := bufio.NewReaderSize(in, 64<<10)
	var line []byte
	for {
		line = line[:0]
		over := false
		var err error
		for {
			var chunk []byte
			chunk, err = r.ReadSlice('\n')
			if !over && len(line)+len(chunk) > maxLine+1 {
				over, line = true, line[:0]
			}
			if !over {
				line = append(line, chunk...)
			}
			if !errors.Is(err, bufio.ErrBufferFull) {
				break
			}
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return err
		}
		msg := bytes.TrimSpace(line)
		switch {
		case over:
			if werr := writeRPCError(bad, nil, rpcParseError, fmt.Sprintf("Parse error: a message over %d bytes was dropped", maxLine)); werr != nil {
				return werr
			}
		case len(msg) == 0:
		default:
			if code, id, why := checkRPCMessage(msg); code != 0 {
				if werr := writeRPCError(bad, id, code, why); werr != nil {
					return werr
				}
			} else if _, werr := good.Write(append(msg, '\n')); werr != nil {
				return werr
			}
		}
		if err != nil {
			return nil // the end of in
		}
	}
}

// checkRPCMessage says why msg is not one JSON-RPC message the server can
// take: the error code, the id to answer with (nil: null) and the message.
// A zero code means msg is fine.
func checkRPCMessage(msg []byte) (code int, id json.RawMessage, why string) {
	if !json.Valid(msg) {
		return rpcParseError, nil, "Parse error: the line is not JSON"
	}
	var probe struct {
		ID json.RawMessage `json:"id"`
	}
	if msg[0] != '{' {
		if msg[0] == '[' {
			return rpcInvalidRequest, nil, "Invalid Request: batches are not accepted; send one message a line"
		}
		return rpcInvalidRequest, nil, "Invalid Request: a message is a JSON object"
	}
	if json.Unmarshal(msg, &probe) == nil && validRPCID(probe.ID) {
		id = probe.ID
	}
	if _, err := jsonrpc.DecodeMessage(msg); err != nil {
		return rpcInvalidRequest, id, "Invalid Request: " + err.Error()
	}
	return 0, nil, ""
}

// validRPCID reports whether raw is an id a reply may carry: a string or
// a number.
func validRPCID(raw json.RawMessage) bool {
	var v any
	if len(raw) == 0 || json.Unmarshal(raw, &v) != nil {
		return false
	}
	switch v.(type) {
	case string, float64:
		return true
	}
	return false
}

// writeRPCError writes one JSON-RPC error response as a line.
func writeRPCError(w io.Writer, id json.RawMessage, code int, message string) error {
	if id == nil {
		id = json.RawMessage("null")
	}
	data, err := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}{JSONRPC: "2.0", ID: id, Error: struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}{code, message}})
	if err != nil {
		return err
	}
	_, err = w.Write(append(data, '\n'))
	return err
}
