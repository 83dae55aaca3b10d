package client

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
)

// MaxEventBytes bounds one line and one event's data of a stream: a server
// that sends more gets the stream ended with an error rather than the
// client's memory.
const MaxEventBytes = 16 << 20

// eventParser reads text/event-stream as the HTML standard's parser does,
// one chunk at a time: lines end with \n, \r\n or \r (a chunk may end
// between \r and \n); a line starting with ":" is a comment; "name:value"
// loses one space after the colon; a line without a colon is a field with
// an empty value; "data" lines of one event join with \n; a blank line
// dispatches the event if it has data (an "event" line alone dispatches
// nothing); other fields (id, retry) are ignored; an unfinished event at
// the end of the stream is dropped; a UTF-8 byte order mark at the start of
// the stream is dropped, as decoding the stream does. Its result does not
// depend on how the bytes are split into chunks.
type eventParser struct {
	line    []byte
	skipLF  bool // the last line ended with \r: a \n next belongs to it
	event   string
	data    []byte
	hasData bool
	bom     int  // bytes of a leading byte order mark read so far
	started bool // past the stream's start: no byte order mark any more
}

// utf8BOM is the byte order mark a stream may start with.
const utf8BOM = "\xef\xbb\xbf"

// skipBOM drops a byte order mark at the start of the stream, which may
// arrive over several reads. Bytes that began like one but were not are
// text again.
func (p *eventParser) skipBOM(b []byte) []byte {
	n := 0
	for n < len(b) && p.bom+n < len(utf8BOM) && b[n] == utf8BOM[p.bom+n] {
		n++
	}
	switch {
	case p.bom+n == len(utf8BOM):
		p.started = true
		return b[n:]
	case n == len(b):
		p.bom += n // the mark may go on in the next read
		return nil
	}
	p.started = true
	return append([]byte(utf8BOM[:p.bom]), b...)
}

func (p *eventParser) feed(b []byte, emit func(StreamEvent) error) error {
	if !p.started {
		b = p.skipBOM(b)
	}
	for len(b) > 0 {
		if p.skipLF {
			p.skipLF = false
			if b[0] == '\n' {
				b = b[1:]
				continue
			}
		}
		i := bytes.IndexAny(b, "\r\n")
		if i < 0 {
			if len(p.line)+len(b) > MaxEventBytes {
				return fmt.Errorf("stream: a line longer than %d bytes", MaxEventBytes)
			}
			p.line = append(p.line, b...)
			return nil
		}
		if len(p.line)+i > MaxEventBytes {
			return fmt.Errorf("stream: a line longer than %d bytes", MaxEventBytes)
		}
		p.line = append(p.line, b[:i]...)
		p.skipLF = b[i] == '\r'
		b = b[i+1:]
		err := p.endLine(emit)
		p.line = p.line[:0]
		if err != nil {
			return err
		}
	}
	return nil
}

func (p *eventParser) endLine(emit func(StreamEvent) error) error {
	line := p.line
	if len(line) == 0 {
		if !p.hasData {
			p.event = ""
			return nil
		}
		ev := StreamEvent{Event: p.event, Data: json.RawMessage(bytes.Clone(p.data))}
		if ev.Event == "" {
			ev.Event = "message"
		}
		p.event, p.data, p.hasData = "", p.data[:0], false
		return emit(ev)
	}
	if line[0] == ':' {
		return nil
	}
	name, value, _ := bytes.Cut(line, []byte(":"))
	value, _ = bytes.CutPrefix(value, []byte(" "))
	switch string(name) {
	case "event":
		p.event = string(value)
	case "data":
		if p.hasData {
			p.data = append(p.data, '\n')
		}
		if len(p.data)+len(value) > MaxEventBytes {
			return fmt.Errorf("stream: an event's data longer than %d bytes", MaxEventBytes)
		}
		p.data = append(p.data, value...)
		p.hasData = true
	}
	return nil
}

// readEvents parses r as an event stream and calls emit with each event
// until r ends (nil), fails (its error) or emit returns an error.
func readEvents(r io.Reader, emit func(StreamEvent) error) error {
	var p eventParser
	buf := make([]byte, 32<<10)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			if perr := p.feed(buf[:n], emit); perr != nil {
				return perr
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}
