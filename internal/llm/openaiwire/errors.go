package openaiwire

import (
	"encoding/json"
	"net/http"
)

// Error types used by the real service in its error bodies.
const (
	TypeInvalidRequest = "invalid_request_error"
	TypeRateLimit      = "rate_limit_error"
	TypeServer         = "server_error"
	TypeAuthentication = "authentication_error"
)

type errorBody struct {
	Error errorDetail `json:"error"`
}

type errorDetail struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    *string `json:"code"`
}

// WriteError answers with OpenAI's error JSON shape; an empty code is null.
func WriteError(w http.ResponseWriter, status int, typ, code, message string) {
	d := errorDetail{Message: message, Type: typ}
	if code != "" {
		d.Code = &code
	}
	b, err := json.Marshal(errorBody{Error: d})
	if err != nil {
		// Strings always marshal; keep the status even so.
		b = []byte(`{"error":{"message":"internal error","type":"server_error","param":null,"code":null}}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}

// ErrorTypeFor is the error type the real service uses for an HTTP status.
func ErrorTypeFor(status int) string {
	switch {
	case status == http.StatusTooManyRequests:
		return TypeRateLimit
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return TypeAuthentication
	case status >= 500:
		return TypeServer
	default:
		return TypeInvalidRequest
	}
}
