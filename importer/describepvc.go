package importer

import (
	"encoding/json"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"podflow.dev/podflow/bundle"
)

// Claims and volumes as tickets paste them: `kubectl describe pvc`, and the `kubectl get
// pvc` and `kubectl get pv` tables. Each becomes the PersistentVolumeClaim or
// PersistentVolume it prints, marked partial where the printer leaves fields out, so that
// a claim that stays Pending is diagnosed without the rest of the cluster.

// segDescribePVC is `kubectl describe pvc` output (k8s.io/kubectl pkg/describe
// describePersistentVolumeClaim).
const segDescribePVC = "kubectl describe pvc"

// Table kinds of claims and volumes.
const (
	tablePVCs = "kubectl get pvc table"
	tablePVs  = "kubectl get pv table"
)

// pvcTableKind tells a `kubectl get pvc` or `kubectl get pv` header from other headers.
func pvcTableKind(cells []string) string {
	has := func(names ...string) bool {
		for _, n := range names {
			found := false
			for _, c := range cells {
				found = found || c == n
			}
			if !found {
				return false
			}
		}
		return true
	}
	switch {
	case has("NAME", "CAPACITY", "ACCESS MODES", "RECLAIM POLICY", "STATUS", "CLAIM"):
		return tablePVs
	case has("NAME", "STATUS", "VOLUME", "CAPACITY", "ACCESS MODES"):
		return tablePVCs
	}
	return ""
}

// isDescribePVCStart tells whether lines[i] starts a `kubectl describe pvc` block:
// "Name:" at the margin, "Namespace:" next, then "StorageClass:".
func isDescribePVCStart(lines []textLine, i int) bool {
	if !isDescribeBlockStart(lines, i, "Namespace:") {
		return false
	}
	for j := i + 1; j < len(lines) && j <= i+3; j++ {
		if strings.HasPrefix(lines[j].s, "StorageClass:") {
			return true
		}
	}
	return false
}

// describedPVC is one claim read back from `kubectl describe pvc`, with its events.
type describedPVC struct {
	pvc      corev1.PersistentVolumeClaim
	line     int
	events   []parsedEvent
	problems []string
}

// parseDescribePVC reads one claim's describe block.
func parseDescribePVC(lines []textLine) *describedPVC {
	d := &describedPVC{line: lines[0].n}
	c := &d.pvc
	c.APIVersion, c.Kind = "v1", "PersistentVolumeClaim"
	var events describeEventTable
	sec := ""
	for _, l := range lines {
		s := detab(l.s)
		body := strings.TrimSpace(s)
		if body == "" {
			continue
		}
		if !strings.HasPrefix(s, " ") {
			if m := reKey.FindStringSubmatch(body); m != nil {
				sec = d.top(m[1], strings.TrimSpace(m[2]))
				continue
			}
		}
		switch sec {
		case "Labels":
			if k, v, ok := strings.Cut(body, "="); ok {
				setMap(&c.Labels, k, v)
			}
		case "Events":
			events.addRow(s, l, corev1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1", Namespace: c.Namespace, Name: c.Name},
				c.Namespace, &d.events, &d.problems)
		}
	}
	return d
}

// top handles a key at the margin and returns the section it opens.
func (d *describedPVC) top(key, val string) string {
	c := &d.pvc
	switch key {
	case "Name":
		c.Name = val
	case "Namespace":
		c.Namespace = val
	case "StorageClass":
		if val != "" {
			c.Spec.StorageClassName = &val
		}
	case "Status":
		c.Status.Phase = corev1.PersistentVolumeClaimPhase(val)
	case "Volume":
		c.Spec.VolumeName = val
	case "Labels":
		if k, v, ok := strings.Cut(val, "="); ok {
			setMap(&c.Labels, k, v)
		}
	case "Capacity":
		if q, err := resource.ParseQuantity(val); err == nil {
			c.Status.Capacity = corev1.ResourceList{corev1.ResourceStorage: q}
		}
	case "Access Modes":
		c.Spec.AccessModes = accessModes(val)
	case "VolumeMode":
		if val != "" {
			m := corev1.PersistentVolumeMode(val)
			c.Spec.VolumeMode = &m
		}
	}
	return key
}

func setMap(m *map[string]string, k, v string) {
	if *m == nil {
		*m = map[string]string{}
	}
	(*m)[strings.TrimSpace(k)] = strings.TrimSpace(v)
}

// accessModes reads the short forms kubectl prints ("RWO,ROX", "RWX", "RWOP").
func accessModes(s string) []corev1.PersistentVolumeAccessMode {
	var out []corev1.PersistentVolumeAccessMode
	for _, m := range strings.Split(s, ",") {
		switch strings.TrimSpace(m) {
		case "RWO":
			out = append(out, corev1.ReadWriteOnce)
		case "ROX":
			out = append(out, corev1.ReadOnlyMany)
		case "RWX":
			out = append(out, corev1.ReadWriteMany)
		case "RWOP":
			out = append(out, corev1.ReadWriteOncePod)
		}
	}
	return out
}

// addPVC keeps a claim read from describe or a table, and its events.
func (li *looseImport) addPVC(path string, c *corev1.PersistentVolumeClaim, line int, events []parsedEvent) {
	data, err := json.Marshal(c)
	if err != nil {
		return
	}
	li.addObject(path, rawObject{kind: c.Kind, namespace: c.Namespace, name: c.Name, data: data, line: line})
	for _, e := range events {
		li.addEvent(path, e)
	}
}

// parsePVCTable reads `kubectl get pvc` rows (with -A, NAMESPACE first) into claims that
// know their phase, volume, capacity, access modes and class.
func parsePVCTable(lines []textLine, namespace string) ([]*corev1.PersistentVolumeClaim, []int, []string) {
	t := newTable(lines[0].s)
	var out []*corev1.PersistentVolumeClaim
	var at []int
	var problems []string
	for _, l := range lines[1:] {
		if strings.TrimSpace(l.s) == "" {
			continue
		}
		cells, ok := t.row(l.s, "")
		name := strings.TrimPrefix(cells["NAME"], "persistentvolumeclaim/") // as kubectl get all prints it
		phase := cells["STATUS"]
		if !ok || !isDNSName(name) || (phase != "Pending" && phase != "Bound" && phase != "Lost") {
			problems = append(problems, fmt.Sprintf("line %d: not a persistentvolumeclaim row", l.n))
			continue
		}
		ns := namespace
		if v := cells["NAMESPACE"]; v != "" {
			ns = v
		}
		c := &corev1.PersistentVolumeClaim{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "PersistentVolumeClaim"},
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Annotations: map[string]string{bundle.PartialAnnotation: "spec.resources,metadata"}},
		}
		c.Status.Phase = corev1.PersistentVolumeClaimPhase(phase)
		c.Spec.VolumeName = cells["VOLUME"]
		if sc := cells["STORAGECLASS"]; sc != "" && sc != "<unset>" {
			c.Spec.StorageClassName = &sc
		}
		c.Spec.AccessModes = accessModes(cells["ACCESS MODES"])
		if q, err := resource.ParseQuantity(cells["CAPACITY"]); err == nil {
			c.Status.Capacity = corev1.ResourceList{corev1.ResourceStorage: q}
		}
		out = append(out, c)
		at = append(at, l.n)
	}
	return out, at, problems
}

// parsePVTable reads `kubectl get pv` rows into volumes that know their phase, claim,
// capacity, access modes, reclaim policy and class.
func parsePVTable(lines []textLine) ([]rawObject, []string) {
	return tableObjects(lines, "persistentvolume", func(cells map[string]string) (rawObject, error) {
		name := strings.TrimPrefix(cells["NAME"], "persistentvolume/")
		phase := corev1.PersistentVolumePhase(cells["STATUS"])
		switch phase {
		case corev1.VolumeAvailable, corev1.VolumeBound, corev1.VolumeReleased, corev1.VolumeFailed, corev1.VolumePending:
		default:
			return rawObject{}, errNotARow
		}
		if !isDNSName(name) {
			return rawObject{}, errNotARow
		}
		pv := corev1.PersistentVolume{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "PersistentVolume"},
			ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{bundle.PartialAnnotation: "spec.source,spec.nodeAffinity"}},
		}
		pv.Status.Phase = phase
		pv.Spec.StorageClassName = cells["STORAGECLASS"]
		pv.Spec.AccessModes = accessModes(cells["ACCESS MODES"])
		pv.Spec.PersistentVolumeReclaimPolicy = corev1.PersistentVolumeReclaimPolicy(cells["RECLAIM POLICY"])
		if q, err := resource.ParseQuantity(cells["CAPACITY"]); err == nil {
			pv.Spec.Capacity = corev1.ResourceList{corev1.ResourceStorage: q}
		}
		if ns, n, ok := strings.Cut(cells["CLAIM"], "/"); ok && n != "" {
			pv.Spec.ClaimRef = &corev1.ObjectReference{Kind: "PersistentVolumeClaim", Namespace: ns, Name: n}
		}
		data, err := json.Marshal(pv)
		if err != nil {
			return rawObject{}, err
		}
		return rawObject{kind: "PersistentVolume", name: name, data: data}, nil
	})
}
