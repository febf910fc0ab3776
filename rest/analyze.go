package rest

import (
	"cmp"
	"fmt"
	"net/http"
	"strconv"

	"github.com/weirstream/weir/rest/api"
)

func (s *Server) explainAnalyze(w http.ResponseWriter, r *http.Request) {
	if j, ok := s.job(w, r); ok {
		writeJSON(w, http.StatusOK, j.ExplainAnalyze())
	}
}

// hotSubtasks is GET /jobs/:jobid/hot-subtasks?by=busy|backpressure|lag&n=N.
func (s *Server) hotSubtasks(w http.ResponseWriter, r *http.Request) {
	n, ok := positiveParam(w, r, "n", 10)
	if !ok {
		return
	}
	if j, ok := s.job(w, r); ok {
		reply(w)(j.HotSubtasks(cmp.Or(r.URL.Query().Get("by"), api.HotByBusy), n))
	}
}

// positiveParam reads query parameter name as a positive number, def
// when absent; a bad one is answered with a 400.
func positiveParam(w http.ResponseWriter, r *http.Request, name string, def int) (int, bool) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return def, true
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("%s %q: want a positive number", name, v))
		return 0, false
	}
	return n, true
}
