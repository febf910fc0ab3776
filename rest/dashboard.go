package rest

import (
	"net/http"

	"github.com/weirstream/weir/rest/web"
)

// mountDashboard serves the web dashboard (package rest/web) at / and
// /web/; every other path stays the REST API's, unknown ones its JSON 404.
func mountDashboard(mux *http.ServeMux) {
	h := web.Handler()
	mux.Handle("GET /{$}", h)
	mux.Handle("GET /web/", h)
}
