package httpapi

import (
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/leafid/leaf/service"
)

// Worker-id leases for in-process generators (service/workers.go):
// POST /api/snowflake/leases takes one, PUT …/{worker_id} renews it,
// DELETE …/{worker_id} releases it.

// Members of the lease bodies.
const (
	fieldHolder  = "holder"
	fieldTTL     = "ttl_ms"
	fieldReserve = "reserve_ms"
	fieldLease   = "lease"
	fieldLast    = "last_ms"
)

type workerLeaseJSON struct {
	WorkerID int64  `json:"worker_id"`
	Lease    string `json:"lease"`
	// FloorMs: the holder's ids are made above it; ReserveMs: none past
	// it before the next renewal.
	FloorMs   int64         `json:"floor_ms"`
	ReserveMs int64         `json:"reserve_ms"`
	Expires   string        `json:"expires"`
	ExpiresMs int64         `json:"expires_ms"`
	Layout    apiLayoutJSON `json:"layout"`
}

func toWorkerLeaseJSON(l service.WorkerLease) workerLeaseJSON {
	return workerLeaseJSON{
		WorkerID: l.WorkerID, Lease: l.Token, FloorMs: l.Floor, ReserveMs: l.Reserve,
		Expires: l.Expires.UTC().Format(timeLayout), ExpiresMs: l.Expires.UnixMilli(), Layout: layoutJSON(l.Layout),
	}
}

// leaseBody reads a lease call's body: ttl_ms and reserve_ms required.
func leaseBody(c echo.Context, allowed ...string) (jsonObject, time.Duration, int64, error) {
	body, err := readObject(c, allowed...)
	if err != nil {
		return nil, 0, 0, err
	}
	ttl, ok, err := body.int64(fieldTTL)
	if err == nil && !ok {
		err = newError(http.StatusBadRequest, codeInvalidRequest, "ttl_ms is required: the lease's length in milliseconds, %d to %d",
			service.MinWorkerTTL.Milliseconds(), service.MaxWorkerTTL.Milliseconds())
	}
	if err != nil {
		return nil, 0, 0, err
	}
	reserve, ok, err := body.int64(fieldReserve)
	if err == nil && !ok {
		err = newError(http.StatusBadRequest, codeInvalidRequest, "reserve_ms is required: the latest Unix millisecond the holder may make ids at before its next renewal")
	}
	return body, time.Duration(ttl) * time.Millisecond, reserve, err
}

func (s *server) workerAcquire(c echo.Context) error {
	body, ttl, reserve, err := leaseBody(c, fieldHolder, fieldTTL, fieldReserve)
	if err != nil {
		return err
	}
	holder, _, err := body.string(fieldHolder)
	if err != nil {
		return err
	}
	l, err := s.svc.AcquireWorker(c.Request().Context(), holder, ttl, reserve)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, toWorkerLeaseJSON(l))
}

// workerID reads the path's worker id.
func workerID(c echo.Context) (int64, error) {
	s, err := pathParam(c, "worker_id")
	id, perr := strconv.ParseInt(s, 10, 64)
	if err != nil || perr != nil || !allDigits(s) {
		return 0, newError(http.StatusBadRequest, codeInvalidRequest, "the worker id in the path must be a non-negative integer")
	}
	return id, nil
}

func (s *server) workerRenew(c echo.Context) error {
	id, err := workerID(c)
	if err != nil {
		return err
	}
	body, ttl, reserve, err := leaseBody(c, fieldLease, fieldTTL, fieldReserve)
	if err != nil {
		return err
	}
	token, _, err := body.string(fieldLease)
	if err != nil {
		return err
	}
	l, err := s.svc.RenewWorker(c.Request().Context(), id, token, ttl, reserve)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, toWorkerLeaseJSON(l))
}

func (s *server) workerRelease(c echo.Context) error {
	id, err := workerID(c)
	if err != nil {
		return err
	}
	body, err := readObject(c, fieldLease, fieldLast)
	if err != nil {
		return err
	}
	token, _, err := body.string(fieldLease)
	if err != nil {
		return err
	}
	last, ok, err := body.int64(fieldLast)
	if err == nil && !ok {
		err = newError(http.StatusBadRequest, codeInvalidRequest, "last_ms is required: the last Unix millisecond the holder made an id at")
	}
	if err != nil {
		return err
	}
	if err := s.svc.ReleaseWorker(c.Request().Context(), id, token, last); err != nil {
		return err
	}
	return c.JSON(http.StatusOK, workerReleasedJSON{WorkerID: id, LastMs: last})
}

type workerReleasedJSON struct {
	WorkerID int64 `json:"worker_id"`
	LastMs   int64 `json:"last_ms"`
}
