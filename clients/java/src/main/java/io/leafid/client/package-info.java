/**
 * The Java client of leaf: segment ids from ranges leased from leaf servers and handed out
 * in-process, snowflake ids fetched in batches, and per-key sequence numbers from each key's
 * owner, with failover across servers. JDK 17's standard library only.
 *
 * <p>{@link io.leafid.client.LeafClient} is the client; every failure is a {@link
 * io.leafid.client.LeafException} carrying an {@link io.leafid.client.ErrorCode}. The behaviour
 * is the Go client's (docs/go-client.md), held to it by the conformance suite in
 * clients/conformance.
 */
package io.leafid.client;
