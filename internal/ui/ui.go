// Package ui is the web dashboard served at /ui/ (docs/dashboard.md): plain HTML,
// CSS and JavaScript modules embedded in the binary, so it works offline
// and needs no build step. The pages read the same /v1 API as every other
// client and follow GET /v1/events/stream for live updates; nothing here
// reads the store or the view directly.
//
// Concurrency: the handler only serves embedded files and is safe for
// concurrent requests.
package ui

import (
	"embed"
	"io/fs"
	"net/http"
)

//go:embed static
var files embed.FS

// Handler serves the dashboard under /ui/. Every path that is not a file
// serves the page shell (index.html), so a deep link such as
// /ui/tasks/ID opens the task page.
func Handler() http.Handler {
	root, err := fs.Sub(files, "static")
	if err != nil {
		panic(err) // the embedded tree is fixed at build time
	}
	fileServer := http.StripPrefix("/ui/", http.FileServerFS(root))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name := r.URL.Path[len("/ui/"):]
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("Content-Security-Policy", csp)
		w.Header().Set("Referrer-Policy", "no-referrer")
		if name == "" || !exists(root, name) {
			w.Header().Set("Cache-Control", "no-cache")
			http.ServeFileFS(w, r, root, "index.html")
			return
		}
		w.Header().Set("Cache-Control", "no-cache")
		fileServer.ServeHTTP(w, r)
	})
}

// csp allows only the dashboard's own files and its own API: no inline
// script, no third-party origin.
const csp = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
	"object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'"

func exists(root fs.FS, name string) bool {
	st, err := fs.Stat(root, name)
	return err == nil && !st.IsDir()
}
