// Package web owns Weir's web dashboard: the HTML, CSS and JavaScript in
// static/ (embedded in the binary, so it works offline and with no CDN),
// served at / and /web/ next to the REST API. The pages only read the
// REST API's JSON (package rest) and draw it with the vendored Chart.js
// (static/vendor, re-fetched by scripts/vendor-web.sh). It imports nothing
// of Weir's.
package web

import (
	"embed"
	"io/fs"
	"net/http"
)

//go:embed static
var files embed.FS

// csp keeps the pages to their own scripts and styles: no inline script,
// nothing from another origin, not framed (clickjacking of the stop and
// cancel buttons).
const csp = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"

// Handler serves the dashboard: GET / is the page, GET /web/... its
// assets. The REST API stays on its own paths; mount this only on those
// two patterns.
func Handler() http.Handler {
	sub, err := fs.Sub(files, "static")
	if err != nil {
		panic(err) // the embedded tree always has static/
	}
	assets := http.StripPrefix("/web/", http.FileServer(http.FS(sub)))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", csp)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cache-Control", "no-cache")
		if r.URL.Path == "/" {
			http.ServeFileFS(w, r, sub, "index.html")
			return
		}
		if r.URL.Path[len(r.URL.Path)-1] == '/' {
			http.NotFound(w, r) // no directory listings
			return
		}
		assets.ServeHTTP(w, r)
	})
}
