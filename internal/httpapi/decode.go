package httpapi

import (
	"bytes"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/cronactor/cronactor/actors/task/rules"
)

// parseSpecTime reads a time a task records (first_run, next_run): "" is
// unset, and a time rules.TimeProblem refuses — the zero time
// 0001-01-01T00:00:00Z above all, which would otherwise read as unset — is
// an error naming the field.
func parseSpecTime(field, s string) (time.Time, error) {
	t, err := parseTime(field, s)
	if err != nil || s == "" {
		return t, err
	}
	if msg := rules.TimeProblem(t); msg != "" {
		return t, &fieldErr{field, msg}
	}
	return t, nil
}

// maxDepth bounds how deeply a request body may nest objects and arrays.
const maxDepth = 100

// decode reads a request body strictly (see decodeStrict): at most maxBody
// bytes.
func decode(r *http.Request, v any) error {
	_, err := decodeBody(r, v)
	return err
}

// decodeBody is decode that also returns the body it read.
func decodeBody(r *http.Request, v any) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil {
		return nil, &fieldErr{"body", err.Error()}
	}
	if len(b) > maxBody {
		return nil, &tooLargeErr{fmt.Sprintf("must be at most %d bytes", maxBody)}
	}
	return b, decodeStrict(b, v)
}

// tooLargeErr is a body over maxBody: 413, naming the field "body".
type tooLargeErr struct{ msg string }

func (e *tooLargeErr) Error() string { return "body: " + e.msg }

// decodeStrict decodes one JSON object into v, a pointer to a struct, and
// refuses, naming the field:
//   - a key that is not exactly one of the struct's JSON names (Go's own
//     decoder matches names regardless of case, so "Name" or "INTERVAL"
//     would set name or interval, and override it when both are sent);
//   - a key given twice in one object, anywhere in the body, payloads
//     included (Go's decoder keeps the last; other readers keep the first);
//   - a body that is not UTF-8, nests deeper than maxDepth, or has anything
//     after the object.
//
// Values are then decoded by encoding/json; a value of the wrong type is an
// error naming its field.
func decodeStrict(b []byte, v any) error {
	if !utf8.Valid(b) {
		return &fieldErr{"body", "must be UTF-8 text"}
	}
	t := reflect.TypeOf(v)
	if t == nil || t.Kind() != reflect.Pointer {
		return fmt.Errorf("httpapi: decodeStrict needs a pointer, got %T", v)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	w := &walker{dec: dec}
	first, err := dec.Token()
	switch {
	case errors.Is(err, io.EOF):
		return &fieldErr{"body", "must be a JSON object, got nothing"}
	case err != nil:
		return syntaxErr(err)
	case first != json.Delim('{'):
		return &fieldErr{"body", "must be a JSON object"}
	}
	if err := w.object(t.Elem(), ""); err != nil {
		return err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return &fieldErr{"body", "trailing data after the JSON object"}
	}

	dec = json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			field := jsonPath(t.Elem(), te.Field)
			if field == "" {
				field = "body"
			}
			return &fieldErr{field, fmt.Sprintf("must be a %s", te.Type)}
		}
		return &fieldErr{"body", "invalid JSON: " + err.Error()}
	}
	return nil
}

// jsonPath is the path encoding/json names in a type error as the body
// spells it: without the Go names of embedded structs it puts in
// ("policyBody.retry.max_attempts" is "retry.max_attempts").
func jsonPath(t reflect.Type, path string) string {
	embedded := map[string]bool{}
	var walk func(reflect.Type)
	walk = func(t reflect.Type) {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct {
			return
		}
		for i := 0; i < t.NumField(); i++ {
			if f := t.Field(i); f.Anonymous && f.Tag.Get("json") == "" && !embedded[f.Name] {
				embedded[f.Name] = true
				walk(f.Type)
			}
		}
	}
	walk(t)
	var out []string
	for _, seg := range strings.Split(path, ".") {
		if !embedded[seg] {
			out = append(out, seg)
		}
	}
	return strings.Join(out, ".")
}

func syntaxErr(err error) error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return &fieldErr{"body", fmt.Sprintf("invalid JSON at byte %d: %s", se.Offset, se.Error())}
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return &fieldErr{"body", "invalid JSON: unexpected end"}
	}
	return &fieldErr{"body", "invalid JSON: " + err.Error()}
}

// walker reads a body token by token, checking each object's keys against
// the type its value decodes into.
type walker struct {
	dec   *json.Decoder
	depth int
}

var (
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// shape is what a value decodes into, for checking keys: a struct's fields
// by exact JSON name, a map's or slice's element, or nothing known (any
// JSON: only duplicates are refused).
type shape struct {
	fields map[string]reflect.Type // set for a struct
	elem   reflect.Type            // a map's or slice's element
}

func shapeOf(t reflect.Type) shape {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || t.Implements(jsonUnmarshaler) || reflect.PointerTo(t).Implements(jsonUnmarshaler) ||
		t.Implements(textUnmarshaler) || reflect.PointerTo(t).Implements(textUnmarshaler) {
		return shape{}
	}
	switch t.Kind() {
	case reflect.Struct:
		f := map[string]reflect.Type{}
		jsonFields(t, f)
		return shape{fields: f}
	case reflect.Map, reflect.Slice, reflect.Array:
		return shape{elem: t.Elem()}
	}
	return shape{}
}

// jsonFields collects a struct's JSON names as encoding/json reads them
// (tag name or field name; untagged embedded structs flattened).
func jsonFields(t reflect.Type, into map[string]reflect.Type) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			et := f.Type
			if et.Kind() == reflect.Pointer {
				et = et.Elem()
			}
			if et.Kind() == reflect.Struct {
				jsonFields(et, into)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		if _, ok := into[name]; !ok {
			into[name] = f.Type
		}
	}
}

// value reads one value that decodes into t (nil: any JSON).
func (w *walker) value(t reflect.Type, path string) error {
	tok, err := w.dec.Token()
	if err != nil {
		return syntaxErr(err)
	}
	switch tok {
	case json.Delim('{'):
		return w.object(t, path)
	case json.Delim('['):
		return w.array(t, path)
	}
	return nil
}

// object reads the keys and values of an object whose '{' was read.
func (w *walker) object(t reflect.Type, path string) error {
	if w.depth++; w.depth > maxDepth {
		return &fieldErr{orBody(path), fmt.Sprintf("nests deeper than %d levels", maxDepth)}
	}
	sh := shapeOf(t)
	seen := map[string]bool{}
	for w.dec.More() {
		tok, err := w.dec.Token()
		if err != nil {
			return syntaxErr(err)
		}
		key, _ := tok.(string)
		p := join(path, key)
		if seen[key] {
			return &fieldErr{p, "is given more than once"}
		}
		seen[key] = true
		var vt reflect.Type
		switch {
		case sh.fields != nil:
			ft, ok := sh.fields[key]
			if !ok {
				return &fieldErr{p, unknownField(key, sh.fields)}
			}
			vt = ft
		default:
			vt = sh.elem
		}
		if err := w.value(vt, p); err != nil {
			return err
		}
	}
	if _, err := w.dec.Token(); err != nil { // '}'
		return syntaxErr(err)
	}
	w.depth--
	return nil
}

// array reads the elements of an array whose '[' was read.
func (w *walker) array(t reflect.Type, path string) error {
	if w.depth++; w.depth > maxDepth {
		return &fieldErr{orBody(path), fmt.Sprintf("nests deeper than %d levels", maxDepth)}
	}
	elem := shapeOf(t).elem
	for i := 0; w.dec.More(); i++ {
		if err := w.value(elem, path+"["+strconv.Itoa(i)+"]"); err != nil {
			return err
		}
	}
	if _, err := w.dec.Token(); err != nil { // ']'
		return syntaxErr(err)
	}
	w.depth--
	return nil
}

// unknownField says a key is not a field, pointing at the field it differs
// from only in case, if any.
func unknownField(key string, fields map[string]reflect.Type) string {
	names := make([]string, 0, len(fields))
	for n := range fields {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if strings.EqualFold(n, key) {
			return fmt.Sprintf("unknown field; field names are case-sensitive: did you mean %q?", n)
		}
	}
	return "unknown field"
}

// maxKeyInPath bounds how much of a key an error repeats.
const maxKeyInPath = 100

func join(path, key string) string {
	if len(key) > maxKeyInPath {
		cut := maxKeyInPath
		for cut > 0 && !utf8.RuneStart(key[cut]) {
			cut--
		}
		key = key[:cut] + "…"
	}
	if key == "" {
		key = `""`
	}
	if path == "" {
		return key
	}
	return path + "." + key
}

func orBody(path string) string {
	if path == "" {
		return "body"
	}
	return path
}
