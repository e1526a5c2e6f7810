package httpapi

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/trtbuild/trtbuild/internal/exitcode"
	"github.com/trtbuild/trtbuild/internal/service"
)

// apiError is the body of every error the API answers: what is wrong, on one line, and what to
// do about it.
type apiError struct {
	Error string `json:"error"`
	Hint  string `json:"hint,omitempty"`
}

// writeError answers status with {"error": problem, "hint": hint}.
func writeError(w http.ResponseWriter, status int, problem, hint string) {
	writeJSON(w, status, apiError{Error: exitcode.OneLine(errors.New(problem)), Hint: hint})
}

// writeJSON answers status with v as JSON.
func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		b, _ = json.Marshal(apiError{Error: "encoding the response: " + err.Error()})
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}

// httpStatus is the HTTP status that answers a refusal of kind.
func httpStatus(kind service.Kind) int {
	switch kind {
	case service.KindUnusable:
		return http.StatusUnprocessableEntity
	case service.KindNotFound:
		return http.StatusNotFound
	case service.KindConflict:
		return http.StatusConflict
	case service.KindUnavailable:
		return http.StatusServiceUnavailable
	case service.KindNoRoom:
		return http.StatusInsufficientStorage
	case service.KindInternal:
		return http.StatusInternalServerError
	}
	return http.StatusBadRequest // KindInvalid
}

// writeServiceError answers an error of the Manager: a *service.RequestError with the status of
// its kind (httpStatus),
// problem and hint; not found with
// 404; anything else with 500.
func (s *Server) writeServiceError(w http.ResponseWriter, r *http.Request, err error) {
	var re *service.RequestError
	switch {
	case errors.As(err, &re):
		writeError(w, httpStatus(re.Kind), re.Problem, re.Hint)
	case errors.Is(err, service.ErrNotFound):
		writeError(w, http.StatusNotFound, "no build "+quoteHeader(r.PathValue("id")), "list the builds: GET /v1/builds")
	default:
		// logErrors logs it, with the request.
		writeError(w, http.StatusInternalServerError, exitcode.OneLine(err), "")
	}
}
