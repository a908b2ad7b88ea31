package hooks

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
)

// An agent's JSON settings file is the user's: install and uninstall change
// borg's entries in it and write everything else back as it was read. Its
// keys keep their order, its numbers their digits (12345678901234567890
// stays, 1.0 stays 1.0), its strings their characters ("&&", "<" are not
// escaped) and the file its indentation. Only the whitespace between
// tokens is borg's: one key or element a line, as json.MarshalIndent lays
// it out.

// jsonObject is a JSON object that keeps its keys in the order read.
// Values are *jsonObject, []any, string, json.Number, bool or nil (and
// int for a number borg adds).
type jsonObject struct {
	keys []string
	vals map[string]any
}

func newJSONObject() *jsonObject { return &jsonObject{vals: map[string]any{}} }

// jsonObjectOf is an object of key, value pairs, in that order.
func jsonObjectOf(kv ...any) *jsonObject {
	o := newJSONObject()
	for i := 0; i+1 < len(kv); i += 2 {
		o.set(kv[i].(string), kv[i+1])
	}
	return o
}

func (o *jsonObject) get(k string) any {
	if o == nil {
		return nil
	}
	return o.vals[k]
}

func (o *jsonObject) has(k string) bool {
	if o == nil {
		return false
	}
	_, ok := o.vals[k]
	return ok
}

// set gives k the value v, in its place when k is there, else last.
func (o *jsonObject) set(k string, v any) {
	if _, ok := o.vals[k]; !ok {
		o.keys = append(o.keys, k)
	}
	o.vals[k] = v
}

func (o *jsonObject) del(k string) {
	if _, ok := o.vals[k]; !ok {
		return
	}
	delete(o.vals, k)
	for i, key := range o.keys {
		if key == k {
			o.keys = append(o.keys[:i:i], o.keys[i+1:]...)
			break
		}
	}
}

func (o *jsonObject) len() int {
	if o == nil {
		return 0
	}
	return len(o.keys)
}

// keyList is a copy of o's keys, in order.
func (o *jsonObject) keyList() []string {
	if o == nil {
		return nil
	}
	return append([]string{}, o.keys...)
}

// clone is a shallow copy of o.
func (o *jsonObject) clone() *jsonObject {
	c := &jsonObject{keys: append([]string{}, o.keys...), vals: make(map[string]any, len(o.vals))}
	for k, v := range o.vals {
		c.vals[k] = v
	}
	return c
}

// decodeJSONObject reads a JSON document whose top is an object.
func decodeJSONObject(data []byte) (*jsonObject, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := decodeJSONValue(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("invalid character after the top-level value at offset %d", dec.InputOffset())
	}
	o, ok := v.(*jsonObject)
	if !ok {
		return nil, fmt.Errorf("the top-level value is not an object")
	}
	return o, nil
}

func decodeJSONValue(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil, io.ErrUnexpectedEOF
		}
		return nil, err
	}
	switch tok {
	case json.Delim('{'):
		o := newJSONObject()
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return nil, err
			}
			k, _ := kt.(string)
			v, err := decodeJSONValue(dec)
			if err != nil {
				return nil, err
			}
			o.set(k, v) // a repeated key: the last value, as encoding/json reads it
		}
		_, err := dec.Token() // '}'
		return o, err
	case json.Delim('['):
		a := []any{}
		for dec.More() {
			v, err := decodeJSONValue(dec)
			if err != nil {
				return nil, err
			}
			a = append(a, v)
		}
		_, err := dec.Token() // ']'
		return a, err
	}
	return tok, nil // string, json.Number, bool or nil
}

// encodeJSON lays v out one key or element a line, each level indented by
// indent, and ends it with a newline.
func encodeJSON(v any, indent string) ([]byte, error) {
	var b bytes.Buffer
	if err := writeJSONValue(&b, v, indent, 0); err != nil {
		return nil, err
	}
	b.WriteByte('\n')
	return b.Bytes(), nil
}

func writeJSONValue(b *bytes.Buffer, v any, indent string, depth int) error {
	line := func(d int) {
		b.WriteByte('\n')
		b.WriteString(strings.Repeat(indent, d))
	}
	switch x := v.(type) {
	case *jsonObject:
		if x.len() == 0 {
			b.WriteString("{}")
			return nil
		}
		b.WriteByte('{')
		for i, k := range x.keys {
			if i > 0 {
				b.WriteByte(',')
			}
			line(depth + 1)
			if err := writeJSONScalar(b, k); err != nil {
				return err
			}
			b.WriteString(": ")
			if err := writeJSONValue(b, x.vals[k], indent, depth+1); err != nil {
				return err
			}
		}
		line(depth)
		b.WriteByte('}')
	case []any:
		if len(x) == 0 {
			b.WriteString("[]")
			return nil
		}
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			line(depth + 1)
			if err := writeJSONValue(b, e, indent, depth+1); err != nil {
				return err
			}
		}
		line(depth)
		b.WriteByte(']')
	case json.Number:
		b.WriteString(string(x)) // the file's own digits
	default:
		return writeJSONScalar(b, v)
	}
	return nil
}

// writeJSONScalar writes a string, bool, nil or number, without escaping
// what HTML would mind ("&&", "<" and ">" in a shell command stay).
func writeJSONScalar(b *bytes.Buffer, v any) error {
	var s bytes.Buffer
	enc := json.NewEncoder(&s)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	b.Write(bytes.TrimSuffix(s.Bytes(), []byte("\n")))
	return nil
}

// jsonIndent is the indentation a JSON file's own lines use: the
// leading space of its first indented line, two spaces when it has none
// (it is on one line).
func jsonIndent(data []byte) string {
	lines := strings.Split(string(data), "\n")
	for _, l := range lines[min(1, len(lines)):] {
		l = strings.TrimRight(l, "\r")
		t := strings.TrimLeft(l, " \t")
		if t == "" || len(t) == len(l) {
			continue
		}
		return l[:len(l)-len(t)]
	}
	return "  "
}

// jsonEqual reports whether two JSON values say the same, whatever the
// order of their keys.
func jsonEqual(a, b any) bool {
	ab, err1 := encodeJSON(a, "")
	bb, err2 := encodeJSON(b, "")
	var x, y any
	if err1 != nil || err2 != nil || json.Unmarshal(ab, &x) != nil || json.Unmarshal(bb, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}
