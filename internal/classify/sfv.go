package classify

import (
	"errors"
	"unicode/utf8"
)

// This file is a strict parser of the Structured Field Values of RFC 9651
// (which obsoletes RFC 8941), limited to what the rate-limit fields need:
// Lists and Dictionaries of Items with Parameters. An Inner List is
// refused (no rate-limit field has one), so is anything else the RFC's
// parsing algorithms fail on: the draft says a malformed RateLimit field
// MUST be ignored, and a parser that guesses would trust what the provider
// did not say. Every step consumes input, so the work is linear in the
// length of the value, which the caller bounds.

// sfKind is the type of a bare item.
type sfKind uint8

const (
	sfInteger sfKind = iota + 1
	sfDecimal
	sfString
	sfToken
	sfBytes
	sfBoolean
	sfDate
	sfDisplay
)

// sfItem is a bare item with its parameters. Only the values the reader
// uses are kept: n for an Integer or Date, s for a String or Token.
type sfItem struct {
	kind   sfKind
	n      int64
	s      string
	params []sfParam
}

// sfParam is one parameter of an item, or one member of a Dictionary.
type sfParam struct {
	key  string
	item sfItem // a parameter's value has no parameters of its own
}

// param returns the value of the parameter key, the last one when the key
// repeats (RFC 9651 §4.2.3.2: a later value overwrites an earlier one).
func (it sfItem) param(key string) (sfItem, bool) {
	for i := len(it.params) - 1; i >= 0; i-- {
		if it.params[i].key == key {
			return it.params[i].item, true
		}
	}
	return sfItem{}, false
}

// maxSFMembers bounds the members of a List or Dictionary and the
// parameters of one item. A provider's rate-limit field has a handful; a
// value with more is refused rather than walked.
const maxSFMembers = 64

var (
	errSF        = errors.New("malformed structured field")
	errSFTooMany = errors.New("structured field with too many members")
)

// sfParser walks one field value.
type sfParser struct {
	s string
	i int
}

func (p *sfParser) done() bool { return p.i >= len(p.s) }
func (p *sfParser) peek() byte {
	if p.done() {
		return 0
	}
	return p.s[p.i]
}

func (p *sfParser) skipSP() {
	for !p.done() && p.s[p.i] == ' ' {
		p.i++
	}
}

func (p *sfParser) skipOWS() {
	for !p.done() && (p.s[p.i] == ' ' || p.s[p.i] == '\t') {
		p.i++
	}
}

// parseSFList parses a field value as a List of Items (RFC 9651 §4.2.1).
// An empty value is an empty List.
func parseSFList(v string) ([]sfItem, error) {
	p := &sfParser{s: trimOWS(v)}
	var out []sfItem
	for !p.done() {
		if len(out) == maxSFMembers {
			return nil, errSFTooMany
		}
		it, err := p.item()
		if err != nil {
			return nil, err
		}
		out = append(out, it)
		if err := p.nextMember(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// parseSFDict parses a field value as a Dictionary (RFC 9651 §4.2.2).
// Members keep their order; a repeated key is kept twice and read by the
// caller as the last one.
func parseSFDict(v string) ([]sfParam, error) {
	p := &sfParser{s: trimOWS(v)}
	var out []sfParam
	for !p.done() {
		if len(out) == maxSFMembers {
			return nil, errSFTooMany
		}
		key, err := p.key()
		if err != nil {
			return nil, err
		}
		var it sfItem
		if p.peek() == '=' {
			p.i++
			if it, err = p.item(); err != nil {
				return nil, err
			}
		} else {
			it = sfItem{kind: sfBoolean, n: 1}
			if it.params, err = p.params(); err != nil {
				return nil, err
			}
		}
		out = append(out, sfParam{key: key, item: it})
		if err := p.nextMember(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// nextMember consumes the separator after a member: optional whitespace,
// then the end of input or a comma followed by another member.
func (p *sfParser) nextMember() error {
	p.skipOWS()
	if p.done() {
		return nil
	}
	if p.s[p.i] != ',' {
		return errSF
	}
	p.i++
	p.skipOWS()
	if p.done() { // a trailing comma
		return errSF
	}
	return nil
}

// item parses an Item: a bare item and its parameters. An Inner List is
// refused.
func (p *sfParser) item() (sfItem, error) {
	it, err := p.bareItem()
	if err != nil {
		return sfItem{}, err
	}
	it.params, err = p.params()
	return it, err
}

// params parses Parameters (RFC 9651 §4.2.3.2).
func (p *sfParser) params() ([]sfParam, error) {
	var out []sfParam
	for p.peek() == ';' {
		if len(out) == maxSFMembers {
			return nil, errSFTooMany
		}
		p.i++
		p.skipSP()
		key, err := p.key()
		if err != nil {
			return nil, err
		}
		val := sfItem{kind: sfBoolean, n: 1}
		if p.peek() == '=' {
			p.i++
			if val, err = p.bareItem(); err != nil {
				return nil, err
			}
		}
		out = append(out, sfParam{key: key, item: val})
	}
	return out, nil
}

// key parses a key: lcalpha or "*", then lcalpha, DIGIT, "_", "-", ".", "*".
func (p *sfParser) key() (string, error) {
	start := p.i
	if c := p.peek(); !(c >= 'a' && c <= 'z' || c == '*') {
		return "", errSF
	}
	p.i++
	for !p.done() {
		c := p.s[p.i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.' || c == '*') {
			break
		}
		p.i++
	}
	return p.s[start:p.i], nil
}

// bareItem parses one bare item by its first character.
func (p *sfParser) bareItem() (sfItem, error) {
	switch c := p.peek(); {
	case c == '-' || c >= '0' && c <= '9':
		return p.number()
	case c == '"':
		s, err := p.str()
		return sfItem{kind: sfString, s: s}, err
	case c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c == '*':
		return sfItem{kind: sfToken, s: p.token()}, nil
	case c == ':':
		return sfItem{kind: sfBytes}, p.bytes()
	case c == '?':
		return p.boolean()
	case c == '@':
		p.i++
		it, err := p.number()
		if err != nil || it.kind != sfInteger {
			return sfItem{}, errSF
		}
		return sfItem{kind: sfDate, n: it.n}, nil
	case c == '%':
		return sfItem{kind: sfDisplay}, p.display()
	}
	return sfItem{}, errSF
}

// number parses an Integer (at most 15 digits) or a Decimal (at most 12
// integer digits and 1–3 fraction digits), RFC 9651 §4.2.4.
func (p *sfParser) number() (sfItem, error) {
	neg := p.peek() == '-'
	if neg {
		p.i++
	}
	var n int64
	intDigits, fracDigits, dot := 0, 0, false
scan:
	for !p.done() {
		c := p.s[p.i]
		switch {
		case c >= '0' && c <= '9' && !dot:
			if intDigits == 15 {
				return sfItem{}, errSF
			}
			n = n*10 + int64(c-'0')
			intDigits++
		case c >= '0' && c <= '9':
			if fracDigits == 3 {
				return sfItem{}, errSF
			}
			fracDigits++
		case c == '.' && !dot && intDigits > 0 && intDigits <= 12:
			dot = true
		default:
			break scan
		}
		p.i++
	}
	if intDigits == 0 || dot && fracDigits == 0 {
		return sfItem{}, errSF
	}
	if neg {
		n = -n
	}
	if dot {
		return sfItem{kind: sfDecimal}, nil
	}
	return sfItem{kind: sfInteger, n: n}, nil
}

// str parses a String: printable ASCII between quotes, with only \" and \\
// as escapes.
func (p *sfParser) str() (string, error) {
	p.i++ // the opening quote
	var b []byte
	for !p.done() {
		c := p.s[p.i]
		p.i++
		switch {
		case c == '\\':
			if p.done() || p.s[p.i] != '"' && p.s[p.i] != '\\' {
				return "", errSF
			}
			b = append(b, p.s[p.i])
			p.i++
		case c == '"':
			return string(b), nil
		case c < 0x20 || c > 0x7e:
			return "", errSF
		default:
			b = append(b, c)
		}
	}
	return "", errSF // no closing quote
}

// token parses a Token: the first character is checked by the caller;
// then tchar, ":" or "/".
func (p *sfParser) token() string {
	start := p.i
	p.i++
	for !p.done() && (isTchar(p.s[p.i]) || p.s[p.i] == ':' || p.s[p.i] == '/') {
		p.i++
	}
	return p.s[start:p.i]
}

func isTchar(c byte) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		return true
	}
	switch c {
	case '!', '#', '$', '%', '&', '\'', '*', '+', '-', '.', '^', '_', '`', '|', '~':
		return true
	}
	return false
}

// bytes checks a Byte Sequence: base64 characters between colons. The
// value is not decoded (the reader never uses it); RFC 9651 §4.2.7 asks
// parsers not to fail on missing padding or non-zero pad bits.
func (p *sfParser) bytes() error {
	p.i++ // the opening colon
	for !p.done() {
		c := p.s[p.i]
		p.i++
		switch {
		case c == ':':
			return nil
		case c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '+', c == '/', c == '=':
		default:
			return errSF
		}
	}
	return errSF
}

// boolean parses ?0 or ?1.
func (p *sfParser) boolean() (sfItem, error) {
	if p.i+1 >= len(p.s) || p.s[p.i+1] != '0' && p.s[p.i+1] != '1' {
		return sfItem{}, errSF
	}
	n := int64(p.s[p.i+1] - '0')
	p.i += 2
	return sfItem{kind: sfBoolean, n: n}, nil
}

// display checks a Display String (RFC 9651 §4.2.10): %"…" of printable
// ASCII but '%' and '"', and %xx escapes in lowercase hex that decode to
// valid UTF-8.
func (p *sfParser) display() error {
	if p.i+1 >= len(p.s) || p.s[p.i+1] != '"' {
		return errSF
	}
	p.i += 2
	var b []byte
	for !p.done() {
		c := p.s[p.i]
		p.i++
		switch {
		case c == '"':
			if !utf8.Valid(b) {
				return errSF
			}
			return nil
		case c == '%':
			if p.i+2 > len(p.s) || !isLowerHex(p.s[p.i]) || !isLowerHex(p.s[p.i+1]) {
				return errSF
			}
			b = append(b, unhex(p.s[p.i])<<4|unhex(p.s[p.i+1]))
			p.i += 2
		case c < 0x20 || c > 0x7e:
			return errSF
		default:
			b = append(b, c)
		}
	}
	return errSF
}

func isLowerHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' }

func unhex(c byte) byte {
	if c <= '9' {
		return c - '0'
	}
	return c - 'a' + 10
}

// trimOWS removes the optional whitespace (SP and HTAB) around a field
// value, as an HTTP parser does before the structured-field parser runs.
func trimOWS(v string) string {
	i, j := 0, len(v)
	for i < j && (v[i] == ' ' || v[i] == '\t') {
		i++
	}
	for j > i && (v[j-1] == ' ' || v[j-1] == '\t') {
		j--
	}
	return v[i:j]
}
