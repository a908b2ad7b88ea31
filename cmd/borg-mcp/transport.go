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
	"time"

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

// endGrace is how long, at the end of its input, the server waits for the
// answers it owes while it writes nothing at all: a request it will never
// answer (one the SDK drops) must not keep it alive for ever.
const endGrace = 2 * time.Minute

// guardedStdio is the MCP server's transport: newline-delimited JSON-RPC
// over in and out, as the SDK's stdio transport, except that a line that is
// not a JSON-RPC message (not JSON, over maxLine bytes, not a request,
// notification or response, a batch) is answered with a JSON-RPC error
// (parse error or invalid request, id null unless the line names one) and
// dropped, and the server keeps serving. The SDK ends the session on such a
// line; an agent's server must not die of one bad message. So is a request
// whose id is that of one not yet answered (the SDK would drop it without
// a word): id null, as the id is not its own.
//
// At the end of in, the requests already passed on are answered before
// the server sees the end: a client that writes its requests and closes
// its end (a script piping into borg mcp) gets every answer. It waits no
// longer than grace with nothing written.
func guardedStdio(in io.Reader, out io.Writer, maxLine int, grace time.Duration) mcp.Transport {
	pr, pw := io.Pipe()
	w := &lockedWriter{w: out, pending: map[string]bool{}}
	w.idle = sync.NewCond(&w.mu)
	good := &requestCounter{w: pw, lw: w}
	go func() {
		err := screenLines(in, good, guardWriter{w}, maxLine)
		if err == nil {
			w.waitIdle(grace)
		}
		_ = pw.CloseWithError(err)
	}()
	// The SDK's own limit never applies: every line it reads was measured.
	return &mcp.IOTransport{Reader: pr, Writer: nopWriteCloser{w}, MaxLineLength: -1}
}

// lockedWriter serialises writes: the SDK's replies and the guard's errors
// go to one stream, one whole line per write. It notes the requests
// passed on that are not answered yet (pending, by rpcIDKey) and when it
// last wrote.
type lockedWriter struct {
	mu      sync.Mutex
	w       io.Writer
	pending map[string]bool
	last    time.Time
	idle    *sync.Cond
}

// Write writes one of the server's replies, and notes the request it
// answers as answered.
func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if msg, err := jsonrpc.DecodeMessage(p); err == nil {
		if reply, ok := msg.(*jsonrpc.Response); ok {
			l.done(rpcIDKey(reply.ID))
		}
	}
	return l.write(p)
}

// write writes p as it is; l.mu is held.
func (l *lockedWriter) write(p []byte) (int, error) {
	l.last = time.Now()
	l.idle.Broadcast()
	return l.w.Write(p)
}

// guardWriter is how the guard answers a line it drops: on the server's
// stream, answering no request passed on (a bad line may carry the id of
// one in flight, whose answer is still owed).
type guardWriter struct{ l *lockedWriter }

func (g guardWriter) Write(p []byte) (int, error) {
	g.l.mu.Lock()
	defer g.l.mu.Unlock()
	return g.l.write(p)
}

// done notes that request id needs no answer any more (answered, or
// cancelled by the client); l.mu is held.
func (l *lockedWriter) done(id string) {
	if l.pending[id] {
		delete(l.pending, id)
		l.idle.Broadcast()
	}
}

// sent notes a request passed on to the server, and reports false, noting
// nothing, when one with its id is still waiting for its answer.
func (l *lockedWriter) sent(id string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.pending[id] {
		return false
	}
	l.pending[id] = true
	return true
}

// cancelled notes a request the client cancelled: the server does not
// answer it.
func (l *lockedWriter) cancelled(id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.done(id)
}

// rpcIDKey is a JSON-RPC id as the SDK decodes it (jsonrpc.MakeID), as one
// string: a number is the int64 the SDK makes of it and answers with (1,
// 1.0, 1e0 and 1.5 are all 1; one past int64 is what the conversion
// gives), and a string stays apart from a number. "" is no id.
func rpcIDKey(id jsonrpc.ID) string {
	switch v := id.Raw().(type) {
	case int64:
		return strconv.FormatInt(v, 10)
	case string:
		return strconv.Quote(v)
	}
	return ""
}

// waitIdle returns once every request passed on has been answered, or
// nothing has been written for grace.
func (l *lockedWriter) waitIdle(grace time.Duration) {
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		t := time.NewTicker(grace / 8)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				l.mu.Lock()
				l.idle.Broadcast()
				l.mu.Unlock()
			}
		}
	}()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.last = time.Now()
	for len(l.pending) > 0 && time.Since(l.last) < grace {
		l.idle.Wait()
	}
}

// requestCounter passes lines on to w and notes each request (a message
// with a method and an id) with lw, so the end of input waits for its
// answer; a request whose id is waiting for its answer is refused on lw
// instead.
type requestCounter struct {
	w  io.Writer
	lw *lockedWriter
}

func (r *requestCounter) Write(p []byte) (int, error) {
	// As the SDK reads it: screenLines passes on only what it decodes.
	if msg, err := jsonrpc.DecodeMessage(p); err == nil {
		if req, ok := msg.(*jsonrpc.Request); ok {
			switch {
			case req.Method == "notifications/cancelled":
				r.lw.cancelled(cancelledID(req.Params))
			case req.IsCall() && !r.lw.sent(rpcIDKey(req.ID)):
				if err := writeRPCError(r.lw, nil, rpcInvalidRequest, fmt.Sprintf("Invalid Request: id %s is that of a request not answered yet", rpcIDKey(req.ID))); err != nil {
					return 0, err
				}
				return len(p), nil
			}
		}
	}
	return r.w.Write(p)
}

// cancelledID is the key of the request a notifications/cancelled names
// in params, read as the SDK reads it (its field names match exactly).
func cancelledID(params json.RawMessage) string {
	var fields map[string]json.RawMessage
	var raw any
	if json.Unmarshal(params, &fields) != nil || json.Unmarshal(fields["requestId"], &raw) != nil {
		return ""
	}
	id, err := jsonrpc.MakeID(raw)
	if err != nil {
		return ""
	}
	return rpcIDKey(id)
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
