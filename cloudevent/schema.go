package cloudevent

import (
	"mime"
	"strings"
)

// Media types of the RSB wire schemas that have one of their own.
const (
	ctUTF8     = "text/plain; charset=utf-8"
	ctASCII    = "text/plain; charset=us-ascii"
	ctBytes    = "application/octet-stream"
	ctProtobuf = "application/x-protobuf"
	ctRSB      = "application/vnd.rsb"
)

// ContentType returns the datacontenttype of data in wire schema ws (see
// the package documentation); "" for the empty schema.
func ContentType(ws string) string {
	switch {
	case ws == "":
		return ""
	case ws == "utf-8-string":
		return ctUTF8
	case ws == "ascii-string":
		return ctASCII
	case ws == "bytes":
		return ctBytes
	case strings.Contains(ws, "/") && isMediaType(ws):
		return ws
	case ws[0] == '.':
		if ct := mime.FormatMediaType(ctProtobuf, map[string]string{"messagetype": ws}); ct != "" {
			return ct
		}
	}
	if ct := mime.FormatMediaType(ctRSB, map[string]string{"wireschema": ws}); ct != "" {
		return ct
	}
	return ctBytes
}

// WireSchema returns the RSB wire schema of data of content type ct, the
// inverse of ContentType: the schemas ContentType names by a media type of
// their own come back, and any other content type is the wire schema
// itself.
func WireSchema(ct string) string {
	mt, params, err := mime.ParseMediaType(ct)
	if err != nil {
		return ct
	}
	switch mt {
	case "text/plain":
		if len(params) == 1 {
			switch strings.ToLower(params["charset"]) {
			case "utf-8":
				return "utf-8-string"
			case "us-ascii":
				return "ascii-string"
			}
		}
	case ctBytes:
		if len(params) == 0 {
			return "bytes"
		}
	case ctProtobuf:
		if ws := params["messagetype"]; len(params) == 1 && ws != "" {
			return ws
		}
	case ctRSB:
		if ws := params["wireschema"]; len(params) == 1 && ws != "" {
			return ws
		}
	}
	return ct
}

// isJSONType reports whether content type ct declares JSON data: absent,
// */json or */*+json.
func isJSONType(ct string) bool {
	if ct == "" {
		return true
	}
	mt, _, _ := strings.Cut(ct, ";")
	mt = strings.ToLower(strings.TrimSpace(mt))
	_, sub, ok := strings.Cut(mt, "/")
	return ok && (sub == "json" || strings.HasSuffix(sub, "+json"))
}

// isTextType reports whether content type ct declares text (text/*).
func isTextType(ct string) bool {
	return len(ct) >= 5 && strings.EqualFold(ct[:5], "text/")
}

// isMediaType reports whether s is a media type as RFC 2046 and RFC 9110
// write it, the form datacontenttype must have.
func isMediaType(s string) bool {
	_, _, err := mime.ParseMediaType(s)
	return err == nil
}
