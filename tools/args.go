package tools

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
)

// decode fills v (a pointer to an args struct) from a tool call's JSON
// arguments. Unknown fields are ignored; fields whose json tag lacks
// omitempty are required (as in the generated schema), and null counts as
// missing. The error is written for the model.
func decode(args json.RawMessage, v any) error {
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage("{}")
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(args, &raw); err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) {
			return fmt.Errorf("arguments must be a JSON object, not %s", typeErr.Value)
		}
		return fmt.Errorf("arguments are not valid JSON (%v); send a JSON object", err)
	}
	if raw == nil {
		return fmt.Errorf("arguments must be a JSON object, not null")
	}
	var missing []string
	for _, name := range requiredFields(reflect.TypeOf(v).Elem()) {
		if val, ok := raw[name]; !ok || string(bytes.TrimSpace(val)) == "null" {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("missing required argument %s", strings.Join(quoteAll(missing), ", "))
	}
	if err := json.Unmarshal(args, v); err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) && typeErr.Field != "" {
			return fmt.Errorf("argument %q must be a JSON %s, not %s", typeErr.Field, jsonKind(typeErr.Type), typeErr.Value)
		}
		return fmt.Errorf("arguments do not fit the schema: %v", err)
	}
	return nil
}

// requiredFields mirrors the schema generator's rule: a json tag without
// omitempty (or an explicit required:"true") makes a field required.
func requiredFields(t reflect.Type) []string {
	var names []string
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if name == "" {
			name = f.Name
		}
		required := !strings.Contains(opts, "omitempty")
		switch f.Tag.Get("required") {
		case "true":
			required = true
		case "false":
			required = false
		}
		if required {
			names = append(names, name)
		}
	}
	return names
}

func jsonKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
		return "number"
	case reflect.Slice, reflect.Array:
		return "array"
	default:
		return "object"
	}
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = fmt.Sprintf("%q", s)
	}
	return out
}

// nonEmpty refuses a blank string argument where blank makes no sense.
func nonEmpty(name, value string) error {
	if strings.TrimSpace(value) == "" {
		return fmt.Errorf("argument %q must not be empty", name)
	}
	return nil
}
