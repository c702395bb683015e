package main

import (
	"errors"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// FuzzServeConfigFile: any file text is applied or refused with a usage
// error naming the file; it never panics.
func FuzzServeConfigFile(f *testing.F) {
	for _, s := range []string{"tick: 1s\nworkers: 3\n", "", "- a\n", "tick: [1]\n", "data: {a: 1}\n", "insecure: yes\n", "&a x: *a\n", "tick: 1s\ntick: 1s\n", "queue: [a=1, b=2]\n", "queue: {a: 1}\n", "queue: a=1,b=x\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, text []byte) {
		c := serveConfig{source: map[string]string{}}
		err := c.applyFile("config.yaml", text)
		if err != nil && (!errors.Is(err, errUsage) || !strings.Contains(err.Error(), "config.yaml")) {
			t.Fatalf("error %v: want a usage error naming the file", err)
		}
	})
}

// FuzzEscapeControl: what a table shows has no control character and
// is valid UTF-8, whatever the name.
func FuzzEscapeControl(f *testing.F) {
	for _, s := range []string{"inbox", "a\nb", "\x1b[31m", "\xff", "\u202e", "é\t"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := escapeControl(s)
		if !utf8.ValidString(out) {
			t.Fatalf("%q → %q: not UTF-8", s, out)
		}
		for _, r := range out {
			if unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r) {
				t.Fatalf("%q → %q: control character %U left", s, out, r)
			}
		}
	})
}
