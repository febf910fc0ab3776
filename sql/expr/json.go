package expr

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"strings"

	"github.com/weirstream/weir/sql/parser"
)

func init() {
	register("JSON_VALUE", 2, 2, "json, path", jsonFunc)
	register("JSON_QUERY", 2, 2, "json, path", jsonFunc)
	register("JSON_EXISTS", 2, 2, "json, path", jsonFunc)
}

// jsonFunc is JSON_VALUE (a scalar as STRING), JSON_QUERY (an object or
// array as JSON text) and JSON_EXISTS, with the default NULL ON EMPTY and
// NULL ON ERROR (FALSE ON ERROR for JSON_EXISTS). Paths are SQL/JSON's
// basic form: $, .key, ['key'], [n], with an optional lax or strict
// prefix.
func jsonFunc(c *compiler, call *parser.FuncCall, a []*Compiled) (*Compiled, error) {
	if err := expect(call, a, famString); err != nil {
		return nil, err
	}
	var konst []jsonStep
	if v, ok := constArg(a, 1); ok && v != nil {
		steps, err := parseJSONPath(v.(string))
		if err != nil {
			return nil, errAt(call.Args[1], "invalid JSON path %s: %v", showValue(v), err)
		}
		konst = steps
	}
	name := call.Name
	t := stringType(true)
	if name == "JSON_EXISTS" {
		t = boolType(false)
	}
	return fn(call, a, t, func(v []any) (any, error) {
		steps := konst
		if steps == nil {
			var err error
			if steps, err = parseJSONPath(v[1].(string)); err != nil {
				return jsonMiss(name), nil
			}
		}
		dec := json.NewDecoder(strings.NewReader(v[0].(string)))
		dec.UseNumber()
		var doc any
		if err := dec.Decode(&doc); err != nil {
			return jsonMiss(name), nil
		}
		x, found := walkJSON(doc, steps)
		switch name {
		case "JSON_EXISTS":
			return found, nil
		case "JSON_QUERY":
			switch x.(type) {
			case map[string]any, []any:
				return compactJSON(x), nil
			}
			return nil, nil
		}
		if !found {
			return nil, nil
		}
		switch y := x.(type) {
		case string:
			return y, nil
		case json.Number:
			return y.String(), nil
		case bool:
			return strconv.FormatBool(y), nil
		}
		return nil, nil // null, objects and arrays are not scalars
	}), nil
}

func jsonMiss(name string) any {
	if name == "JSON_EXISTS" {
		return false
	}
	return nil
}

func compactJSON(x any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(x)
	return strings.TrimRight(b.String(), "\n")
}

// jsonStep is one step of a path: a member name or an array index.
type jsonStep struct {
	key   string
	index int
	isIdx bool
}

func parseJSONPath(p string) ([]jsonStep, error) {
	p = strings.TrimSpace(p)
	for _, mode := range []string{"lax ", "strict "} {
		p = strings.TrimSpace(strings.TrimPrefix(p, mode))
	}
	if !strings.HasPrefix(p, "$") {
		return nil, errors.New("a path starts with $")
	}
	steps := []jsonStep{}
	for i := 1; i < len(p); {
		switch p[i] {
		case '.':
			i++
			if i < len(p) && p[i] == '[' {
				continue // $.['a b']
			}
			j := i
			for j < len(p) && p[j] != '.' && p[j] != '[' {
				j++
			}
			if j == i {
				return nil, errors.New("empty member name")
			}
			key := p[i:j]
			if len(key) >= 2 && key[0] == '"' && key[len(key)-1] == '"' {
				key = key[1 : len(key)-1]
			}
			steps = append(steps, jsonStep{key: key})
			i = j
		case '[':
			end := strings.IndexByte(p[i:], ']')
			if end < 0 {
				return nil, errors.New("unclosed [")
			}
			in := strings.TrimSpace(p[i+1 : i+end])
			i += end + 1
			if len(in) >= 2 && (in[0] == '\'' || in[0] == '"') && in[len(in)-1] == in[0] {
				steps = append(steps, jsonStep{key: in[1 : len(in)-1]})
				continue
			}
			n, err := strconv.Atoi(in)
			if err != nil || n < 0 {
				return nil, errors.New("an index must be a number, like [0]")
			}
			steps = append(steps, jsonStep{index: n, isIdx: true})
		default:
			return nil, errors.New("unexpected character " + strconv.Quote(string(p[i])))
		}
	}
	return steps, nil
}

func walkJSON(doc any, steps []jsonStep) (any, bool) {
	for _, s := range steps {
		if s.isIdx {
			arr, ok := doc.([]any)
			if !ok || s.index >= len(arr) {
				return nil, false
			}
			doc = arr[s.index]
			continue
		}
		obj, ok := doc.(map[string]any)
		if !ok {
			return nil, false
		}
		if doc, ok = obj[s.key]; !ok {
			return nil, false
		}
	}
	return doc, true
}
