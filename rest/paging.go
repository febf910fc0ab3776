package rest

import (
	"fmt"
	"net/http"
	"strconv"

	"github.com/weirstream/weir/rest/api"
)

// window is Weir's paging of a subtask list (Flink has none): ?offset=
// (default 0) and ?limit= (default: all). Without either a list is whole,
// as Flink's tooling expects; the dashboard asks for a page at a time.
type window struct{ offset, limit int }

// pageParams reads ?offset= and ?limit=; an error names the parameter.
func pageParams(r *http.Request) (window, error) {
	w := window{limit: -1}
	for _, p := range []struct {
		name string
		to   *int
	}{{"offset", &w.offset}, {"limit", &w.limit}} {
		v := r.URL.Query().Get(p.name)
		if v == "" {
			continue
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return w, fmt.Errorf("%s %q: want a number of subtasks, 0 or more", p.name, v)
		}
		*p.to = n
	}
	return w, nil
}

// pageOf is s's part in the window.
func pageOf[T any](s []T, w window) []T {
	from := min(w.offset, len(s))
	to := len(s)
	if w.limit >= 0 {
		to = min(from+w.limit, len(s))
	}
	return s[from:to]
}

// withoutSubtasks drops the vertices' per-subtask lists (Weir's addition
// to Flink's /jobs/:jobid): each vertex's tasks counts them by status. At
// 5,000 subtasks the lists made the response 1.75 MB.
func withoutSubtasks(d api.JobDetails) api.JobDetails {
	vs := make([]api.JobVertex, len(d.Vertices))
	for i, v := range d.Vertices {
		v.Subtasks = nil
		vs[i] = v
	}
	d.Vertices = vs
	return d
}

// paged answers v, or a 400 naming the bad paging parameter.
func paged(w http.ResponseWriter, r *http.Request, get func(window) (any, error)) {
	win, err := pageParams(r)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	reply(w)(get(win))
}
