package analyze

import (
	"errors"
	"sync"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	jsonv1 "github.com/go-json-experiment/json/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// sharedDecode makes the parts of objects that repeat byte for byte one value while a
// load decodes them. The pods of one workload carry the same owner references,
// tolerations, probes, commands, ports, environment, security contexts and projected
// token volume as each other: only names, addresses, times and the token volume's name
// differ. Decoded apart, those parts were a third of what a healthy pod costs. Equal JSON
// text decodes to equal values, and nothing in podflow writes to an object it loaded,
// so a part read a second time takes the first one's value instead of being decoded
// again; which decode came first makes no difference to what is held.
//
// It is safe for the decodes that run side by side on every core. Each table is capped:
// a bundle whose parts never repeat stops filling it.
type sharedDecode struct {
	mu     sync.Mutex
	tables map[string]*shareTable
	// kept is the length of the texts the tables hold.
	kept int
	opts jsonv2.Options
}

// shareTable holds, for one type, the value decoded from each JSON text.
type shareTable struct {
	values map[string]any
}

const (
	// shareCap bounds the texts kept per type, shareKeep their length over all types.
	// A big cluster's pods name tens of thousands of owners, each shared by a
	// ReplicaSet's pods, and as many commands: room for 4096 texts was full a fifth of
	// the way into 20k pods. The tables go before the events are decoded (loadObjects),
	// so their texts are held while the other lists load, below the load's peak.
	shareCap  = 1 << 16
	shareKeep = 32 << 20
	// shareMaxText is the longest text worth keeping: longer parts rarely repeat.
	shareMaxText = 4 << 10
)

func newSharedDecode() *sharedDecode {
	s := &sharedDecode{tables: map[string]*shareTable{}}
	s.opts = jsonv2.JoinOptions(jsonv1.DefaultOptionsV1(), jsonv2.WithUnmarshalers(jsonv2.JoinUnmarshalers(
		timeUnmarshalers,
		shareOf[[]metav1.OwnerReference](s, "ownerReferences"),
		shareOf[map[string]string](s, "stringMap"),
		shareOf[[]string](s, "strings"),
		shareOf[[]corev1.Toleration](s, "tolerations"),
		shareOf[*corev1.Affinity](s, "affinity"),
		shareOf[*corev1.PodSecurityContext](s, "podSecurityContext"),
		shareOf[*corev1.SecurityContext](s, "securityContext"),
		shareOf[*corev1.Probe](s, "probe"),
		shareOf[*corev1.Lifecycle](s, "lifecycle"),
		shareOf[[]corev1.ContainerPort](s, "ports"),
		shareOf[[]corev1.EnvVar](s, "env"),
		shareOf[[]corev1.EnvFromSource](s, "envFrom"),
		shareOf[[]corev1.VolumeMount](s, "volumeMounts"),
		shareOf[[]corev1.VolumeMountStatus](s, "volumeMountStatuses"),
		shareOf[[]corev1.LocalObjectReference](s, "imagePullSecrets"),
		shareOf[*corev1.ProjectedVolumeSource](s, "projected"),
		shareOf[*corev1.ConfigMapVolumeSource](s, "configMapVolume"),
		shareOf[*corev1.SecretVolumeSource](s, "secretVolume"),
		shareOf[*corev1.EmptyDirVolumeSource](s, "emptyDir"),
		shareOf[*corev1.HostPathVolumeSource](s, "hostPath"),
		shareOf[[]corev1.TopologySpreadConstraint](s, "topologySpread"),
		shareOf[[]corev1.PodReadinessGate](s, "readinessGates"),
		// Small parts each object of a kind carries alike: a rollout's strategy, a pod's
		// preemption policy and DNS policy, its resources as the kubelet reports them, a
		// selector, and the times a generated or restored cluster shares. At 20k pods
		// they were about 4 MB decoded apart.
		shareOf[*appsv1.RollingUpdateDeployment](s, "rollingUpdate"),
		shareOf[*corev1.PreemptionPolicy](s, "preemptionPolicy"),
		shareOf[corev1.DNSPolicy](s, "dnsPolicy"),
		shareOf[*corev1.ResourceRequirements](s, "resources"),
		shareOf[*metav1.LabelSelector](s, "selector"),
		shareOf[*metav1.Time](s, "time"),
		shareListOf[[]corev1.PodCondition, conditionList](s, "podConditions"),
		shareListOf[[]corev1.Container, containerList](s, "containers"),
		shareListOf[[]corev1.Volume, volumeList](s, "volumes"),
	)))
	return s
}

// unmarshal decodes data into v with encoding/json's semantics (fastUnmarshal),
// sharing the parts that repeat.
func (s *sharedDecode) unmarshal(data []byte, v any) error {
	if s == nil {
		return fastUnmarshal(data, v) // nothing to share with
	}
	return jsonv2.Unmarshal(data, v, s.opts)
}

// shareOf is the unmarshaler of fields of type T that shares equal texts. A part is
// decoded with fastUnmarshal, which shares nothing, so it never calls itself.
func shareOf[T any](s *sharedDecode, name string) *jsonv2.Unmarshalers {
	return shareWith(s, name, func(raw []byte, v *T) error { return fastUnmarshal(raw, v) })
}

// Lists of a pod's (or a template's) containers, volumes and conditions, as types of
// their own: a list read for the first time is decoded as one of these, which no
// unmarshaler of the tables matches, so its items still share their parts (probes,
// environment, ports, mounts, volume sources) without the list's unmarshaler calling
// itself.
type (
	containerList []corev1.Container
	volumeList    []corev1.Volume
	conditionList []corev1.PodCondition
)

// shareListOf is shareOf for a list whose items hold parts that repeat on their own:
// the pods of one workload carry the same containers and volumes, but a list seen once
// (a token volume's generated name makes each pod's its own) still shares its parts.
// The list is kept in room of its own size: the tables hand it to every pod that
// repeats it.
func shareListOf[T ~[]E, D ~[]E, E any](s *sharedDecode, name string) *jsonv2.Unmarshalers {
	return shareWith(s, name, func(raw []byte, v *T) error {
		var d D
		if err := jsonv2.Unmarshal(raw, &d, s.opts); err != nil {
			return err
		}
		*v = T(exact(d))
		return nil
	})
}

// shareWith is the unmarshaler of fields of type T that shares equal texts, decoding a
// text seen for the first time with decode.
func shareWith[T any](s *sharedDecode, name string, decode func(raw []byte, v *T) error) *jsonv2.Unmarshalers {
	return jsonv2.UnmarshalFromFunc(func(dec *jsontext.Decoder, v *T) error {
		if dec.PeekKind() == 'n' {
			return errors.ErrUnsupported // null keeps encoding/json's meaning for the field
		}
		raw, err := dec.ReadValue()
		if err != nil {
			return err
		}
		if len(raw) > shareMaxText {
			return decode(raw, v)
		}
		s.mu.Lock()
		t := s.tables[name]
		if t == nil {
			t = &shareTable{values: map[string]any{}}
			s.tables[name] = t
		}
		c, ok := t.values[string(raw)]
		s.mu.Unlock()
		if ok {
			*v = c.(T)
			return nil
		}
		var fresh T
		if err := decode(raw, &fresh); err != nil {
			return err
		}
		*v = fresh
		s.mu.Lock()
		if len(t.values) < shareCap && s.kept+len(raw) <= shareKeep {
			t.values[string(raw)] = fresh
			s.kept += len(raw)
		}
		s.mu.Unlock()
		return nil
	})
}
