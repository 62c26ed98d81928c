package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
)

// maxJSONDepth bounds the nesting of request bodies: the largest request nests three deep,
// and encoding/json's own limit (10,000) is far past what any caller needs.
const maxJSONDepth = 32

func writeJSON(w http.ResponseWriter, status int, body interface{}) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(body)
}

// writeError answers `{"error": {"code", "message"}}`: codes are stable, messages say why.
// The code also goes into the request's log line: a refused call is otherwise invisible there.
func writeError(w http.ResponseWriter, status int, code, message string) {
	if rec, ok := w.(*statusRecorder); ok {
		rec.code = code
	}
	writeJSON(w, status, map[string]interface{}{"error": map[string]string{"code": code, "message": message}})
}

// bodyError is a request body that could not be taken, with the reply it deserves.
type bodyError struct {
	status  int
	code    string
	message string
}

func (e *bodyError) Error() string { return e.message }

func (e *bodyError) write(w http.ResponseWriter) { writeError(w, e.status, e.code, e.message) }

// asBodyError turns a read error into a reply: too large (413) or a broken read (400).
func asBodyError(err error) *bodyError {
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return &bodyError{http.StatusRequestEntityTooLarge, "body_too_large", fmt.Sprintf("the request body is larger than %d bytes", maxBodyBytes)}
	}
	return &bodyError{http.StatusBadRequest, "bad_request", "reading the request body: " + err.Error()}
}

// decodeStrict reads one JSON object, refusing unknown fields, deep nesting and trailing data.
func decodeStrict(r *http.Request, into interface{}) *bodyError {
	data, err := io.ReadAll(r.Body)
	if err != nil {
		return asBodyError(err)
	}
	if depth := jsonDepth(data); depth > maxJSONDepth {
		return &bodyError{http.StatusBadRequest, "bad_request", fmt.Sprintf("the JSON body nests deeper than %d", maxJSONDepth)}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(into); err != nil {
		return &bodyError{http.StatusBadRequest, "bad_request", "the body is not the JSON this endpoint takes: " + err.Error()}
	}
	var extra json.RawMessage
	if err := dec.Decode(&extra); err != io.EOF {
		return &bodyError{http.StatusBadRequest, "bad_request", "trailing data after the JSON body"}
	}
	return nil
}

// jsonDepth is the deepest nesting of [ and { in data, outside strings; it is only a bound,
// the decoder still checks the syntax.
func jsonDepth(data []byte) int {
	depth, deepest := 0, 0
	inString, escaped := false, false
	for _, c := range data {
		switch {
		case inString:
			if escaped {
				escaped = false
			} else if c == '\\' {
				escaped = true
			} else if c == '"' {
				inString = false
			}
		case c == '"':
			inString = true
		case c == '[' || c == '{':
			depth++
			if depth > deepest {
				deepest = depth
			}
		case c == ']' || c == '}':
			depth--
		}
	}
	return deepest
}
