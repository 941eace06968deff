package main

import (
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/go-faster/jx"
)

// value turns what an ogen client decoded into the JSON value it holds,
// as check.SameValue compares it: its optional (Opt…) and nullable (Nil…)
// wrappers unwrapped, a time with every digit it was decoded with. (The
// client's own encoder writes a date-time in whole seconds, so encoding
// the value again would not show what it holds.) present is false for an
// optional member that was not set.
func value(v reflect.Value) (out any, present bool) {
	for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		if v.IsNil() {
			return nil, true
		}
		v = v.Elem()
	}
	if v.Type().ConvertibleTo(timeType) && v.Kind() == reflect.Struct {
		// time.Time, or a schema's type defined as one (type Time time.Time).
		return v.Convert(timeType).Interface().(time.Time).Format(time.RFC3339Nano), true
	}
	switch t := v.Interface().(type) {
	case jx.Raw:
		var a any
		d := json.NewDecoder(strings.NewReader(string(t)))
		d.UseNumber()
		_ = d.Decode(&a)
		return a, true
	}
	switch v.Kind() {
	case reflect.Struct:
		return structValue(v)
	case reflect.Map:
		m := map[string]any{}
		for _, k := range v.MapKeys() {
			m[k.String()], _ = value(v.MapIndex(k))
		}
		return m, true
	case reflect.Slice, reflect.Array:
		if v.Kind() == reflect.Slice && v.IsNil() {
			return nil, false // an optional array that was not sent
		}
		a := make([]any, v.Len())
		for i := range a {
			a[i], _ = value(v.Index(i))
		}
		return a, true
	case reflect.String:
		return v.String(), true
	case reflect.Bool:
		return v.Bool(), true
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return json.Number(strconv.FormatInt(v.Int(), 10)), true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return json.Number(strconv.FormatUint(v.Uint(), 10)), true
	case reflect.Float32:
		return json.Number(strconv.FormatFloat(v.Float(), 'g', -1, 32)), true
	case reflect.Float64:
		return json.Number(strconv.FormatFloat(v.Float(), 'g', -1, 64)), true
	}
	return v.Interface(), true
}

var timeType = reflect.TypeFor[time.Time]()

// structValue is value for a struct: an ogen wrapper (fields Value and Set
// or Null) or an object, whose members are its fields' JSON names and
// whose AdditionalProps are members too.
func structValue(v reflect.Value) (any, bool) {
	set, null, val := v.FieldByName("Set"), v.FieldByName("Null"), v.FieldByName("Value")
	if val.IsValid() && (set.IsValid() || null.IsValid()) {
		switch {
		case set.IsValid() && !set.Bool():
			return nil, false
		case null.IsValid() && null.Bool():
			return nil, true
		}
		return value(val)
	}
	obj := map[string]any{}
	for i := 0; i < v.NumField(); i++ {
		f := v.Type().Field(i)
		if !f.IsExported() {
			continue
		}
		if f.Name == "AdditionalProps" {
			if extra, ok := value(v.Field(i)); ok {
				for k, x := range extra.(map[string]any) {
					obj[k] = x
				}
			}
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" {
			continue
		}
		if x, ok := value(v.Field(i)); ok {
			obj[name] = x
		}
	}
	return obj, true
}
