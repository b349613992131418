package config

import (
	"reflect"
	"strings"

	"github.com/BurntSushi/toml"
)

// The toml package fills a struct field from a key that matches its name
// in any case (and under Unicode case folding), so BASE_URL, Base_Url or
// "baſe_url" all land in base_url's field. TOML keys are case-sensitive:
// agentteam reads its settings only as they are spelled, and the checks of
// what a project file may say look at the fields, not at the key text.

// miscased is the first key of keys that names one of rawFile's settings
// in a spelling other than its own, with the spelling it should have.
func miscased(keys []toml.Key) (toml.Key, string, bool) {
	for _, k := range keys {
		t := reflect.TypeOf(rawFile{})
		for i, part := range k {
			for t.Kind() == reflect.Pointer {
				t = t.Elem()
			}
			if t.Kind() == reflect.Map {
				t = t.Elem() // the part is a name the file chooses (a provider, a header)
				continue
			}
			if t.Kind() == reflect.Slice {
				t = t.Elem() // a table of an array of tables ([[hooks.EVENT]])
			}
			if t.Kind() != reflect.Struct || t == reflect.TypeOf(rawRole{}) {
				break // a value, or a role, which reads its own keys exactly
			}
			f, exact := fieldFor(t, part)
			if f == nil {
				break // unknown: Undecoded reports it
			}
			if !exact {
				return k[:i+1], f.Tag.Get("toml"), true
			}
			t = f.Type
		}
	}
	return nil, "", false
}

// fieldFor is t's field the toml package fills from key, and whether key
// is that field's name exactly.
func fieldFor(t reflect.Type, key string) (*reflect.StructField, bool) {
	var folded *reflect.StructField
	for i := range t.NumField() {
		f := t.Field(i)
		name := f.Tag.Get("toml")
		if name == "" || name == "-" {
			continue
		}
		if name == key {
			return &f, true
		}
		if folded == nil && strings.EqualFold(name, key) {
			folded = &f
		}
	}
	return folded, false
}

// keyAs is the key of keys that the toml package read into the setting
// want (written in lower case), as the file spells it; want itself when
// the file does not hold it.
func keyAs(keys []toml.Key, want toml.Key) toml.Key {
	for _, k := range keys {
		if len(k) != len(want) {
			continue
		}
		same := true
		for i := range k {
			if !strings.EqualFold(k[i], want[i]) {
				same = false
				break
			}
		}
		if same {
			return k
		}
	}
	return want
}
