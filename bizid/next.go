package bizid

import (
	"context"
	"fmt"
)

// Next issues one id of t.
func (is *Issuer) Next(ctx context.Context, t *Tag) (ID, error) {
	if t.keyErr != nil {
		return ID{}, t.keyErr
	}
	if t.cipher != nil {
		n, err := is.opts.IDs.Next(ctx, t.Tag)
		if err != nil {
			return ID{}, err
		}
		id, err := t.cipher.Encode(n)
		if err != nil {
			return ID{}, exhaustedError(t, n)
		}
		return ID{N: id}, nil
	}
	b, err := is.AppendText(ctx, t, make([]byte, 0, 32))
	if err != nil {
		return ID{}, err
	}
	return ID{Text: string(b)}, nil
}

// AppendText issues one id of the formatted tag t and appends its text to
// b: Next without the string, for callers that write the text out.
func (is *Issuer) AppendText(ctx context.Context, t *Tag, b []byte) ([]byte, error) {
	if t.keyErr != nil {
		return b, t.keyErr
	}
	if t.tmpl == nil {
		return b, fmt.Errorf("%w: tag %q is not formatted", ErrNotNumeric, t.Tag)
	}
	now := is.opts.Now().In(t.loc)
	ns, _, err := is.numbers(ctx, t, now, 1)
	if err != nil {
		return b, err
	}
	return t.tmpl.AppendText(b, now, ns[0]), nil
}

// NextN issues n ids of t: texts of one period, or opaque numbers.
func (is *Issuer) NextN(ctx context.Context, t *Tag, n int) ([]ID, error) {
	if t.keyErr != nil {
		return nil, t.keyErr
	}
	out := make([]ID, n)
	if t.cipher != nil {
		ns, err := is.opts.IDs.NextN(ctx, t.Tag, n)
		if err != nil {
			return nil, err
		}
		for i, v := range ns {
			if out[i].N, err = t.cipher.Encode(v); err != nil {
				return nil, exhaustedError(t, v)
			}
		}
		return out[:len(ns)], nil
	}
	if t.tmpl == nil {
		return nil, fmt.Errorf("%w: tag %q is not formatted", ErrNotNumeric, t.Tag)
	}
	now := is.opts.Now().In(t.loc)
	ns, _, err := is.numbers(ctx, t, now, n)
	if err != nil {
		return nil, err
	}
	buf := make([]byte, 0, 32)
	for i, v := range ns {
		buf = t.tmpl.AppendText(buf[:0], now, v)
		out[i].Text = string(buf)
	}
	return out[:len(ns)], nil
}

func exhaustedError(t *Tag, n int64) error {
	return fmt.Errorf("%w: number %d is past %d, the last of %d bits", ErrExhausted, n, t.cipher.Max(), t.cipher.Bits())
}
