package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// nested has the shapes a body may take: an optional object, a list of
// objects, a map and opaque JSON.
type nested struct {
	Name   string             `json:"name"`
	Count  *int               `json:"count"`
	Retry  *struct{ Max int } `json:"retry"`
	Items  []item             `json:"items"`
	Labels map[string]string  `json:"labels"`
	Raw    json.RawMessage    `json:"raw"`
	Any    any                `json:"any"`
	inner
}

type item struct {
	ID string `json:"id"`
}

type inner struct {
	Extra string `json:"extra"`
}

// The type errors of the API's bodies name the field as the body spells
// it, not through the Go structs the fields are grouped in.
func TestBodyTypeErrorsNameTheField(t *testing.T) {
	for body, field := range map[string]string{
		`{"max_runs":"3"}`:               "max_runs",
		`{"retry":{"max_attempts":"3"}}`: "retry.max_attempts",
		`{"retry":{"multiplier":"2"}}`:   "retry.multiplier",
		`{"retry":[]}`:                   "retry",
		`{"heartbeat_timeout":5}`:        "heartbeat_timeout",
		`{"queue":["a"]}`:                "queue",
	} {
		for _, v := range []any{&createBody{}, &updateBody{}} {
			var fe *fieldErr
			if err := decodeStrict([]byte(body), v); !errors.As(err, &fe) || fe.field != field {
				t.Errorf("%T %s: %v, want field %s", v, body, err, field)
			}
		}
	}
}

func TestDecodeStrict(t *testing.T) {
	cases := []struct {
		name, body string
		field      string // "" when accepted
		msg        string
	}{
		{"accepted", `{"name":"a","count":1,"retry":{"Max":2},"items":[{"id":"x"}],"labels":{"k":"v"},"raw":{"a":[1,{"b":2}]},"any":[{"c":3}],"extra":"e"}`, "", ""},
		{"empty object", `{}`, "", ""},
		{"escaped key is the same key", `{"\u006eame":"a"}`, "", ""},
		{"white space around", " \n\t{\"name\":\"a\"}\r\n ", "", ""},

		// Go matches keys regardless of case; these are not our fields.
		{"key differs in case", `{"Name":"a"}`, "Name", `did you mean "name"`},
		{"upper-case key after the real one", `{"name":"a","NAME":"b"}`, "NAME", `did you mean "name"`},
		{"nested key differs in case", `{"retry":{"max":2}}`, "retry.max", `did you mean "Max"`},
		{"key in a list element", `{"items":[{"id":"x"},{"Id":"y"}]}`, "items[1].Id", `did you mean "id"`},
		{"Kelvin sign folds to k", "{\"name\":\"a\",\"\u212aey\":1}", "\u212aey", "unknown field"},
		{"unknown key", `{"color":"red"}`, "color", "unknown field"},
		{"empty key", `{"":1}`, `""`, "unknown field"},

		// Duplicates, anywhere.
		{"duplicate key", `{"name":"a","name":"b"}`, "name", "more than once"},
		{"duplicate through an escape", `{"name":"a","na\u006de":"b"}`, "name", "more than once"},
		{"duplicate in a payload", `{"raw":{"url":"http://a","url":"http://b"}}`, "raw.url", "more than once"},
		{"duplicate deep in opaque JSON", `{"any":[1,{"x":{"y":1,"y":2}}]}`, "any[1].x.y", "more than once"},
		{"duplicate in a map", `{"labels":{"k":"1","k":"2"}}`, "labels.k", "more than once"},
		{"duplicate embedded field", `{"extra":"a","extra":"b"}`, "extra", "more than once"},

		// Shape of the body.
		{"not an object", `[]`, "body", "JSON object"},
		{"null", `null`, "body", "JSON object"},
		{"nothing", ``, "body", "got nothing"},
		{"trailing object", `{} {}`, "body", "trailing"},
		{"trailing garbage", `{}x`, "body", "trailing"},
		{"cut short", `{"name":`, "body", "invalid JSON"},
		{"syntax error", `{"name" "a"}`, "body", "invalid JSON"},
		{"not UTF-8", "{\"name\":\"a\xffb\"}", "body", "UTF-8"},
		{"too deep", `{"any":` + strings.Repeat("[", maxDepth) + strings.Repeat("]", maxDepth) + `}`, "any" + strings.Repeat("[0]", maxDepth-1), "deeper than"},
		{"deep but within the bound", `{"any":` + strings.Repeat("[", maxDepth-1) + strings.Repeat("]", maxDepth-1) + `}`, "", ""},
		{"wrong type", `{"name":1}`, "name", "must be a string"},
		{"wrong nested type", `{"items":[{"id":1}]}`, "items.id", "must be a string"},
		{"wrong type of an embedded field", `{"extra":1}`, "extra", "must be a string"},
		{"long unknown key is cut", `{"` + strings.Repeat("k", 500) + `":1}`, strings.Repeat("k", maxKeyInPath) + "…", "unknown field"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var v nested
			err := decodeStrict([]byte(c.body), &v)
			if c.field == "" {
				if err != nil {
					t.Fatalf("decodeStrict: %v", err)
				}
				return
			}
			var fe *fieldErr
			if !errors.As(err, &fe) {
				t.Fatalf("decodeStrict: %v, want a field error for %q", err, c.field)
			}
			if fe.field != c.field || !strings.Contains(fe.msg, c.msg) {
				t.Fatalf("decodeStrict: field %q message %q; want field %q message containing %q", fe.field, fe.msg, c.field, c.msg)
			}
		})
	}
}

// The request bodies of the API: each key of them exactly, and nothing
// else, is a field.
func TestBodiesKnowTheirFields(t *testing.T) {
	for _, v := range []any{&createBody{}, &updateBody{}} {
		sh := shapeOf(reflect.TypeOf(v))
		ty := reflect.TypeOf(v).Elem()
		for i := 0; i < ty.NumField(); i++ {
			f := ty.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if _, ok := sh.fields[name]; !f.Anonymous && !ok {
				t.Errorf("%s: field %s (%q) not known", ty, f.Name, name)
			}
		}
		for name := range sh.fields {
			body := `{"` + name + `":null}`
			if err := decodeStrict([]byte(body), v); err != nil {
				t.Errorf("%s: %s refused: %v", ty, body, err)
			}
			up := `{"` + strings.ToUpper(name) + `":null}`
			if err := decodeStrict([]byte(up), v); err == nil {
				t.Errorf("%s: %s accepted", ty, up)
			}
		}
	}
}

// FuzzDecodeStrict: whatever the body, decodeStrict does not panic; a body
// it accepts is UTF-8 JSON whose every key is one of the body's fields,
// spelt exactly, given once, and it decodes to what encoding/json makes of
// it.
func FuzzDecodeStrict(f *testing.F) {
	for _, s := range []string{
		`{"name":"poll","owner":"channel/pop3/42","kind":"http","interval":"1m","payload":{"url":"http://x"}}`,
		`{"name":"a","Name":"b"}`, `{"INTERVAL":"1s"}`, `{"name":"a","name":"b"}`,
		`{"payload":{"a":1,"a":2}}`, `{"payload":[[[[{}]]]]}`, `{"tolerance":null,"timebox":"1s","priority":3}`,
		`{"first_run":"0001-01-01T00:00:00Z"}`, `{"retry":{"max_attempts":3,"Max_Attempts":4}}`, `{"retry":null,"queue":"q"}`, `{} {}`, `[]`, `"x"`, `{"\u006eame":"a"}`, "{\"n\xffame\":1}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var strict createBody
		if err := decodeStrict(b, &strict); err != nil {
			var fe *fieldErr
			if !errors.As(err, &fe) || fe.field == "" {
				t.Fatalf("%q: error %v names no field", b, err)
			}
			var u updateBody
			_ = decodeStrict(b, &u)
			return
		}
		if !json.Valid(b) {
			t.Fatalf("%q: accepted, but not JSON", b)
		}
		known := shapeOf(reflect.TypeFor[createBody]()).fields
		dec := json.NewDecoder(bytes.NewReader(b))
		if tok, _ := dec.Token(); tok != json.Delim('{') {
			t.Fatalf("%q: accepted, but not an object", b)
		}
		seen := map[string]bool{}
		for dec.More() {
			tok, _ := dec.Token()
			k := tok.(string)
			if _, ok := known[k]; !ok || seen[k] {
				t.Fatalf("%q: accepted key %q (known %v, seen %v)", b, k, ok, seen[k])
			}
			seen[k] = true
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				t.Fatalf("%q: accepted, but %v", b, err)
			}
		}
		var loose createBody
		if err := json.Unmarshal(b, &loose); err != nil {
			t.Fatalf("%q: accepted, but encoding/json refuses it: %v", b, err)
		}
		if !reflect.DeepEqual(strict, loose) {
			t.Fatalf("%q: decoded to %+v, encoding/json to %+v", b, strict, loose)
		}
	})
}
