package api

import (
	"bytes"
	"testing"

	"github.com/valyala/fasthttp"
)

// jsonContentType accepts what lowering the media type and comparing accepts, ASCII or not.
func TestJSONContentType(t *testing.T) {
	lowered := func(ct []byte) bool {
		if i := bytes.IndexByte(ct, ';'); i >= 0 {
			ct = ct[:i]
		}
		ct = bytes.ToLower(bytes.TrimSpace(ct))
		return len(ct) == 0 || bytes.Equal(ct, []byte("application/json")) || bytes.HasSuffix(ct, []byte("+json"))
	}
	for _, ct := range []string{
		"", "application/json", "Application/JSON; charset=utf-8", " application/vnd.api+json ", "application/problem+JSON",
		"text/plain", "application/jsonx", "json", "+json", "application/\u212Aey+json", "APPLİCATİON/JSON", "application/json\u00a0",
	} {
		var ctx fasthttp.RequestCtx
		if ct != "" {
			ctx.Request.Header.SetContentType(ct)
		}
		err := jsonContentType(&ctx)
		if want := lowered([]byte(ct)); (err == nil) != want {
			t.Errorf("%q: got %v, want accepted %v", ct, err, want)
		}
	}
}
