package httpapi

import (
	"net/http"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// TracerName is the instrumentation scope of the API's request spans.
const TracerName = "github.com/cronactor/cronactor/internal/httpapi"

// untraced are the routes of probes and scrapes, which would bury the
// requests people make under a span every few seconds.
var untraced = map[string]bool{"/healthz": true, "/metrics": true}

// traced makes every request a server span named "METHOD route", the route
// being the pattern mux matches ("GET /v1/tasks/{id}"), never the raw path,
// so that span names stay few. A W3C traceparent sent by the client is
// continued. It wraps next, which is mux behind the authentication, so
// refused requests are spans too. Health checks and metric scrapes are not
// traced.
func traced(tp trace.TracerProvider, mux *http.ServeMux, next http.Handler) http.Handler {
	tracer := tp.Tracer(TracerName)
	prop := propagation.TraceContext{}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, pattern := mux.Handler(r)
		route := routeOf(pattern)
		if untraced[route] {
			next.ServeHTTP(w, r)
			return
		}
		name := r.Method
		if route != "" {
			name += " " + route
		}
		ctx := prop.Extract(r.Context(), propagation.HeaderCarrier(r.Header))
		attrs := []attribute.KeyValue{
			attribute.String("http.request.method", r.Method),
			attribute.String("url.path", r.URL.Path),
		}
		if route != "" {
			attrs = append(attrs, attribute.String("http.route", route))
		}
		ctx, span := tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(attrs...))
		defer span.End()
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		next.ServeHTTP(sw, r.WithContext(ctx))
		span.SetAttributes(attribute.Int("http.response.status_code", sw.status))
		if sw.status >= 500 {
			span.SetStatus(codes.Error, http.StatusText(sw.status))
		}
	})
}

// routeOf is the path part of a ServeMux pattern ("GET /v1/tasks/{id}" →
// "/v1/tasks/{id}"; "/" → "/").
func routeOf(pattern string) string {
	if i := strings.IndexByte(pattern, ' '); i >= 0 {
		pattern = strings.TrimLeft(pattern[i+1:], " \t")
	}
	if i := strings.IndexByte(pattern, '/'); i > 0 {
		pattern = pattern[i:] // drop a host
	}
	return pattern
}

// statusWriter remembers the status written. Unwrap lets
// http.ResponseController reach the flusher (the event stream needs it).
type statusWriter struct {
	http.ResponseWriter
	status      int
	wroteHeader bool
}

func (s *statusWriter) WriteHeader(code int) {
	if !s.wroteHeader {
		s.status, s.wroteHeader = code, true
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusWriter) Write(b []byte) (int, error) {
	s.wroteHeader = true
	return s.ResponseWriter.Write(b)
}

func (s *statusWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }
