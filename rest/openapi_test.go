package rest

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/weirstream/weir/rest/api"
)

var rewrite = flag.Bool("rewrite", false, "rewrite docs/rest-openapi.yaml from the route table")

const openAPIFile = "../docs/rest-openapi.yaml"

// The checked-in OpenAPI document describes exactly the routes the server
// serves, with the JSON field names of their bodies (generated from the
// route table and the api types by reflection: go test ./rest -run
// TestOpenAPIDocument -rewrite).
func TestOpenAPIDocument(t *testing.T) {
	doc := openAPI()
	if *rewrite {
		if err := os.WriteFile(openAPIFile, doc, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(openAPIFile)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, doc) {
		t.Fatalf("%s is stale: regenerate it with go test ./rest -run TestOpenAPIDocument -rewrite", openAPIFile)
	}
	var parsed struct {
		Paths map[string]map[string]any `yaml:"paths"`
	}
	if err := yaml.Unmarshal(got, &parsed); err != nil {
		t.Fatalf("%s is not YAML: %v", openAPIFile, err)
	}
	n := 0
	for _, ops := range parsed.Paths {
		n += len(ops)
	}
	if n != len(routes) {
		t.Errorf("%s has %d operations, the server %d routes", openAPIFile, n, len(routes))
	}
}

// openAPI renders the OpenAPI 3 document of the routes.
func openAPI() []byte {
	var b strings.Builder
	b.WriteString(`# Weir's REST API: Flink's paths and JSON field names (every path is served
# with and without the /v1 prefix). GENERATED from rest/server.go's route
# table and package rest/api by: go test ./rest -run TestOpenAPIDocument -rewrite
openapi: 3.0.3
info:
  title: Weir JobManager REST API
  version: v1
  description: >-
    Flink's REST API shapes for jobs, checkpoints, savepoints and vertices, plus
    Weir's job submission (a SQL script), per-subtask checkpoint timeline and
    slowest subtasks. State-changing calls (POST, PATCH) need
    "Authorization: Bearer TOKEN" when weir.rest.auth-token is set. Errors are
    {"errors": ["message"]} with 400 (bad input), 401 (no token), 403 (switched
    off), 404 (unknown job, vertex, checkpoint, path), 409 (job not running).
servers:
  - url: /v1
components:
  securitySchemes:
    token:
      type: http
      scheme: bearer
  schemas:
`)
	schemas := map[string]reflect.Type{}
	byPath := map[string][]route{}
	var paths []string
	for _, r := range routes {
		if _, ok := byPath[r.path]; !ok {
			paths = append(paths, r.path)
		}
		byPath[r.path] = append(byPath[r.path], r)
		collect(schemas, reflect.TypeOf(r.in))
		collect(schemas, reflect.TypeOf(r.out))
	}
	collect(schemas, reflect.TypeOf(ErrorBody{}))
	names := make([]string, 0, len(schemas))
	for n := range schemas {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(&b, "    %s:\n", n)
		writeStruct(&b, schemas[n], "      ")
	}
	b.WriteString("paths:\n")
	sort.Strings(paths)
	for _, p := range paths {
		fmt.Fprintf(&b, "  %s:\n", p)
		for _, r := range byPath[p] {
			writeOperation(&b, r)
		}
	}
	return []byte(b.String())
}

// ErrorBody names api.ErrorResponse in the document.
type ErrorBody struct {
	Errors []string `json:"errors"`
}

var pathParam = regexp.MustCompile(`\{(\w+)\}`)

func writeOperation(b *strings.Builder, r route) {
	fmt.Fprintf(b, "    %s:\n      summary: %q\n", strings.ToLower(r.method), r.summary)
	if r.method != "GET" {
		b.WriteString("      security:\n        - token: []\n        - {}\n")
	}
	params := pathParam.FindAllStringSubmatch(r.path, -1)
	if len(params) > 0 {
		b.WriteString("      parameters:\n")
		for _, m := range params {
			typ, pattern := "string", "^[0-9a-f]{32}$"
			if m[1] == "checkpointid" || m[1] == "subtaskindex" {
				typ, pattern = "integer", ""
			}
			fmt.Fprintf(b, "        - name: %s\n          in: path\n          required: true\n          schema:\n            type: %s\n", m[1], typ)
			if pattern != "" {
				fmt.Fprintf(b, "            pattern: %q\n", pattern)
			}
		}
	}
	if r.in != nil {
		b.WriteString("      requestBody:\n        content:\n          application/json:\n            schema:\n")
		writeRef(b, reflect.TypeOf(r.in), "              ")
	}
	code := "200"
	if r.method != "GET" {
		code = "202"
	}
	media := "application/json"
	if reflect.TypeOf(r.out) == reflect.TypeOf(api.TailEvent{}) {
		media = "text/event-stream" // each event's data is one TailEvent
	}
	fmt.Fprintf(b, "      responses:\n        %q:\n          description: OK\n          content:\n            %s:\n              schema:\n", code, media)
	writeRef(b, reflect.TypeOf(r.out), "                ")
	b.WriteString("        default:\n          description: Flink's error body\n          content:\n            application/json:\n              schema:\n")
	b.WriteString("                $ref: '#/components/schemas/ErrorBody'\n")
}

// collect adds the named struct types reachable from t.
func collect(schemas map[string]reflect.Type, t reflect.Type) {
	if t == nil {
		return
	}
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Map:
		collect(schemas, t.Elem())
	case reflect.Struct:
		if t.Name() != "" {
			if _, ok := schemas[t.Name()]; ok {
				return
			}
			schemas[t.Name()] = t
		}
		for i := range t.NumField() {
			collect(schemas, t.Field(i).Type)
		}
	}
}

func writeRef(b *strings.Builder, t reflect.Type, indent string) {
	switch {
	case t.Kind() == reflect.Pointer:
		writeRef(b, t.Elem(), indent)
	case t.Kind() == reflect.Struct && t.Name() != "":
		fmt.Fprintf(b, "%s$ref: '#/components/schemas/%s'\n", indent, t.Name())
	case t.Kind() == reflect.Struct:
		writeStruct(b, t, indent)
	case t.Kind() == reflect.Slice:
		fmt.Fprintf(b, "%stype: array\n%sitems:\n", indent, indent)
		writeRef(b, t.Elem(), indent+"  ")
	case t.Kind() == reflect.Map:
		fmt.Fprintf(b, "%stype: object\n%sadditionalProperties:\n", indent, indent)
		writeRef(b, t.Elem(), indent+"  ")
	default:
		fmt.Fprintf(b, "%stype: %s\n", indent, scalar(t.Kind()))
	}
}

func scalar(k reflect.Kind) string {
	switch k {
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int64, reflect.Int32:
		return "integer"
	case reflect.Float64:
		return "number"
	}
	return "string"
}

// writeStruct writes t's JSON fields, embedded structs' fields inlined.
func writeStruct(b *strings.Builder, t reflect.Type, indent string) {
	fmt.Fprintf(b, "%stype: object\n", indent)
	fields := jsonFields(t)
	if len(fields) == 0 {
		return
	}
	fmt.Fprintf(b, "%sproperties:\n", indent)
	for _, f := range fields {
		fmt.Fprintf(b, "%s  %s:\n", indent, f.name)
		writeRef(b, f.typ, indent+"    ")
	}
}

type jsonField struct {
	name string
	typ  reflect.Type
}

func jsonFields(t reflect.Type) []jsonField {
	var out []jsonField
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous {
			out = append(out, jsonFields(f.Type)...)
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" {
			continue
		}
		out = append(out, jsonField{fmt.Sprintf("%q", name), f.Type})
	}
	return out
}
