package main

import (
	"github.com/sirupsen/logrus"

	"podflow.dev/podflow/untrusted"
)

// escapingFormatter escapes control characters in a log entry's message and string
// fields before the inner formatter prints them: log lines name bundle files and quote
// evidence, and on a terminal logrus prints both as they are.
type escapingFormatter struct {
	inner logrus.Formatter
}

func (f escapingFormatter) Format(e *logrus.Entry) ([]byte, error) {
	c := *e
	c.Message = untrusted.Text(e.Message)
	c.Data = make(logrus.Fields, len(e.Data))
	for k, v := range e.Data {
		switch v := v.(type) {
		case string:
			c.Data[k] = untrusted.Text(v)
		case []string:
			esc := make([]string, len(v))
			for i, s := range v {
				esc[i] = untrusted.Text(s)
			}
			c.Data[k] = esc
		default:
			c.Data[k] = v
		}
	}
	return f.inner.Format(&c)
}
