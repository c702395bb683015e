package events

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"time"

	"github.com/google/uuid"
)

// Event is a domain event with a stable type name.
type Event interface {
	EventType() string
}

// checker is implemented by events with required fields.
type checker interface {
	check() error
}

// Decode errors. A *DecodeError wraps one of them and names the type and,
// where known, the field.
var (
	ErrUnknownType     = errors.New("events: unknown event type")
	ErrNewerSchema     = errors.New("events: schema version newer than this build")
	ErrMalformed       = errors.New("events: malformed event body")
	ErrNotRegistered   = errors.New("events: event type not registered")
	ErrMissingField    = errors.New("events: required field missing")
	ErrInvalidSchemaNo = errors.New("events: invalid schema version")
)

// DecodeError says which event type and field could not be decoded.
type DecodeError struct {
	Type   string
	Schema int
	Field  string
	Err    error
}

func (e *DecodeError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "events: decode %s", e.Type)
	if e.Schema != 0 {
		fmt.Fprintf(&b, " (schema %d)", e.Schema)
	}
	if e.Field != "" {
		fmt.Fprintf(&b, " field %q", e.Field)
	}
	fmt.Fprintf(&b, ": %v", e.Err)
	return b.String()
}

func (e *DecodeError) Unwrap() error { return e.Err }

// Upgrader rewrites the JSON body of one schema version into the next one.
type Upgrader func(body []byte) ([]byte, error)

type registration struct {
	name     string
	schema   int
	typ      reflect.Type
	upgrades map[int]Upgrader // from version → version+1
}

// Registry maps stable type names to Go types and schema versions.
// The package-level registry (see registry.go) holds the task events; a
// Registry is not safe for concurrent registration and lookup, so register
// everything before use.
type Registry struct {
	byName map[string]*registration
	byType map[reflect.Type]*registration
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{byName: map[string]*registration{}, byType: map[reflect.Type]*registration{}}
}

// Register adds the event type of sample (a struct value, not a pointer)
// under its EventType name at the given current schema version. upgrades maps
// an older version v to the function rewriting a v body into v+1; every
// version from 1 to schema-1 must have one. It panics on a programming error
// (duplicate name, gap in the upgrades), since registration happens at init.
func (r *Registry) Register(sample Event, schema int, upgrades map[int]Upgrader) {
	t := reflect.TypeOf(sample)
	if t.Kind() != reflect.Struct {
		panic(fmt.Sprintf("events: register %T: want a struct value", sample))
	}
	name := sample.EventType()
	if _, dup := r.byName[name]; dup {
		panic("events: duplicate event type " + name)
	}
	if schema < 1 {
		panic(fmt.Sprintf("events: %s: schema version %d < 1", name, schema))
	}
	for v := 1; v < schema; v++ {
		if upgrades[v] == nil {
			panic(fmt.Sprintf("events: %s: no upgrade from schema %d", name, v))
		}
	}
	reg := &registration{name: name, schema: schema, typ: t, upgrades: upgrades}
	r.byName[name] = reg
	r.byType[t] = reg
}

// Types lists the registered type names, sorted.
func (r *Registry) Types() []string {
	out := make([]string, 0, len(r.byName))
	for n := range r.byName {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Schema returns the current schema version of a registered type name.
func (r *Registry) Schema(name string) (int, bool) {
	reg, ok := r.byName[name]
	if !ok {
		return 0, false
	}
	return reg.schema, true
}

// Encode returns the type name, current schema version and JSON body of e.
func (r *Registry) Encode(e Event) (string, int, []byte, error) {
	t := reflect.TypeOf(e)
	if t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
		e = reflect.ValueOf(e).Elem().Interface().(Event)
	}
	reg, ok := r.byType[t]
	if !ok {
		return "", 0, nil, fmt.Errorf("%w: %T", ErrNotRegistered, e)
	}
	if f, ok := e.(fastJSON); ok {
		if data, ok := f.fastJSON(); ok {
			return reg.name, reg.schema, data, nil
		}
	}
	data, err := json.Marshal(e)
	if err != nil {
		return "", 0, nil, fmt.Errorf("events: encode %s: %w", reg.name, err)
	}
	return reg.name, reg.schema, data, nil
}

// Decode turns a type name, schema version and JSON body into the event
// value, upgrading older schema versions first. It never panics; errors are
// *DecodeError values.
func (r *Registry) Decode(typ string, schema int, data []byte) (Event, error) {
	reg, ok := r.byName[typ]
	if !ok {
		return nil, &DecodeError{Type: typ, Schema: schema, Err: ErrUnknownType}
	}
	if schema < 1 {
		return nil, &DecodeError{Type: typ, Schema: schema, Err: ErrInvalidSchemaNo}
	}
	if schema > reg.schema {
		return nil, &DecodeError{Type: typ, Schema: schema,
			Err: fmt.Errorf("%w: stored %d, this build reads up to %d", ErrNewerSchema, schema, reg.schema)}
	}
	body := data
	for v := schema; v < reg.schema; v++ {
		up, err := reg.upgrades[v](body)
		if err != nil {
			return nil, &DecodeError{Type: typ, Schema: v, Err: fmt.Errorf("%w: upgrade to %d: %v", ErrMalformed, v+1, err)}
		}
		body = up
	}
	ev, err := decodeBody(reg, typ, schema, body)
	if err != nil {
		return nil, err
	}
	if c, ok := ev.(checker); ok {
		if err := c.check(); err != nil {
			var fe *fieldError
			field := ""
			if errors.As(err, &fe) {
				field = fe.field
			}
			return nil, &DecodeError{Type: typ, Schema: schema, Field: field, Err: err}
		}
	}
	return ev, nil
}

// decodeBody reads the JSON body of an event of type reg at its current
// schema: the plain bodies of the hot run events without reflection
// (eventjson_decode.go), anything else with encoding/json.
func decodeBody(reg *registration, typ string, schema int, body []byte) (Event, error) {
	if fast, ok := fastDecoders[reg.typ]; ok {
		if ev, ok := fast(body); ok {
			return ev, nil
		}
	}
	return decodeJSON(reg, typ, schema, body)
}

// decodeJSON reads the JSON body of an event of type reg with
// encoding/json.
func decodeJSON(reg *registration, typ string, schema int, body []byte) (Event, error) {
	ptr := reflect.New(reg.typ)
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(ptr.Interface()); err != nil {
		return nil, &DecodeError{Type: typ, Schema: schema, Field: jsonErrorField(err), Err: fmt.Errorf("%w: %v", ErrMalformed, err)}
	}
	if dec.More() {
		return nil, &DecodeError{Type: typ, Schema: schema, Err: fmt.Errorf("%w: trailing data after the body", ErrMalformed)}
	}
	return ptr.Elem().Interface().(Event), nil
}

// jsonErrorField digs the offending field name out of encoding/json errors.
func jsonErrorField(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return te.Field
	}
	if rest, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		return strings.Trim(rest, `"`)
	}
	return ""
}

// fieldError reports a missing or invalid required field.
type fieldError struct {
	field string
	err   error
}

func (e *fieldError) Error() string { return fmt.Sprintf("%s: %v", e.field, e.err) }
func (e *fieldError) Unwrap() error { return e.err }

func required(field string, missing bool) error {
	if missing {
		return &fieldError{field: field, err: ErrMissingField}
	}
	return nil
}

// Propose encodes e with the package registry into an event ready to append.
// A zero id gets a random one.
func Propose(e Event, id uuid.UUID, at time.Time) (Proposed, error) {
	typ, schema, data, err := Default.Encode(e)
	if err != nil {
		return Proposed{}, err
	}
	if id == uuid.Nil {
		id = uuid.New()
	}
	return Proposed{ID: id, Type: typ, Schema: schema, At: at.UTC(), Data: data}, nil
}

// Decode decodes a stored event with the package registry.
func Decode(r Recorded) (Event, error) {
	return Default.Decode(r.Type, r.Schema, r.Data)
}
