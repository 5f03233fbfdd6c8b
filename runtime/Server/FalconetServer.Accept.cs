using System;
using System.Net.Security;
using System.Net.Sockets;
using System.Threading;
using System.Threading.Tasks;
using Falconet.Diagnostics;
using Falconet.Http;
using Falconet.Http.Http1;
using Falconet.Transport;

namespace Falconet.Server;

/// <summary>The accept loops: one per listener, each connection checked against the limit, registered and started where its transport runs it.</summary>
public partial class FalconetServer
{
    /// <summary>
    /// True for the application protocols (ALPN names) the server runs on a connection: an HTTPS endpoint offering any
    /// other fails the start (<see cref="FalconetServerOptions"/> validation names it).
    /// </summary>
    internal static bool Serves(SslApplicationProtocol protocol) => protocol == SslApplicationProtocol.Http11 || protocol == SslApplicationProtocol.Http2;

    private async Task AcceptLoopAsync(IConnectionListener listener)
    {
        await Task.Yield();
        TimeSpan backoff = TimeSpan.Zero;
        while (true)
        {
            TransportConnection? accepted;
            try
            {
                accepted = await listener.AcceptAsync().ConfigureAwait(false);
            }
            catch (Exception exception) when (Volatile.Read(ref _state) == 2)
            {
                ServerLog.AcceptFailed(_logger, exception);
                return;
            }
            catch (SocketException exception) when (exception.SocketErrorCode == SocketError.TooManyOpenSockets)
            {
                // EMFILE or ENFILE: the connection stays in the listen backlog. Pause, longer each time in a row, and go
                // on serving the open connections, which give descriptors back as they close.
                backoff = backoff == TimeSpan.Zero ? InitialAcceptBackoff : TimeSpan.FromTicks(Math.Min(backoff.Ticks * 2, MaxAcceptBackoff.Ticks));
                if (backoff == InitialAcceptBackoff)
                {
                    ServerLog.OutOfDescriptors(_logger, ConnectionCount, exception);
                }

                await Task.Delay(backoff).ConfigureAwait(false);
                continue;
            }
            catch (Exception exception)
            {
                ServerLog.AcceptFailed(_logger, exception);
                await Task.Delay(InitialAcceptBackoff).ConfigureAwait(false);
                continue;
            }

            if (accepted is null)
            {
                return;
            }

            if (backoff != TimeSpan.Zero)
            {
                backoff = TimeSpan.Zero;
                ServerLog.AcceptingAgain(_logger, ConnectionCount);
            }

            // Checked before the connection's objects are made, so a flood past the limit costs an accept and a close.
            if (_connections.Count >= _connections.Limit)
            {
                Refuse(accepted);
                continue;
            }

            ServerConnection? connection = RegisterConnection(accepted, _listenerProtocols[listener]);
            if (connection is null)
            {
                // Another accept loop took the last place; the connection has rented nothing yet.
                Refuse(accepted);
                continue;
            }

            // Started elsewhere (the thread pool, or the connection's own thread or loop): a request that arrived with
            // the connect would otherwise be parsed and handled here, stalling this loop.
            accepted.Schedule(connection);
        }
    }

    /// <summary>
    /// Creates the HTTP connection of an accepted transport connection (plain, or from a TLS listener with its handshake
    /// complete) and counts it as open; null when <see cref="MaxConnections"/> are open already.
    /// </summary>
    /// <remarks>
    /// The protocol is chosen here, per connection: over TLS from what ALPN negotiated
    /// (<see cref="TransportConnection.NegotiatedApplicationProtocol"/>; every protocol the endpoints may offer,
    /// <see cref="Serves"/>, has its connection type here), h2 or else HTTP/1.1; over plain TCP from the endpoint's
    /// <paramref name="protocols"/>: HTTP/2 only, or HTTP/1.1, which hands over to HTTP/2 when the client opens with its
    /// preface and the endpoint serves both.
    /// </remarks>
    private ServerConnection? RegisterConnection(TransportConnection transport, HttpProtocols protocols)
    {
        ServerConnection connection;
        if (transport.TlsInfo is { } tls)
        {
            if (tls.ApplicationProtocol == SslApplicationProtocol.Http2)
            {
                var http2 = new Http.Http2.Http2Connection(transport, _settings!);
                if (!Http.Http2.Http2TlsRequirements.AreMet(tls.Protocol, tls.CipherSuite))
                {
                    // RFC 9113 section 9.2: answered with GOAWAY INADEQUATE_SECURITY, not served.
                    http2.RefuseInadequateSecurity();
                }

                connection = http2;
            }
            else
            {
                // An HTTP/2-only endpoint whose client negotiated no ALPN protocol: HTTP/2 over TLS needs ALPN (RFC 9113
                // section 3.2), and HTTP/1.1 is not served here; the connection is answered with HTTP/2's GOAWAY.
                connection = protocols == HttpProtocols.Http2
                    ? new Http.Http2.Http2Connection(transport, _settings!)
                    : new HttpConnection(transport, _settings!);
            }
        }
        else
        {
            connection = protocols == HttpProtocols.Http2
                ? new Http.Http2.Http2Connection(transport, _settings!)
                : new HttpConnection(transport, _settings!, http2PriorKnowledge: protocols == HttpProtocols.Http1AndHttp2);
        }

        if (!_connections.TryAdd(connection))
        {
            return null;
        }

        connection.SetQueued(ServerMetrics.ConnectionQueued(transport.LocalEndPoint));
        return connection;
    }

    /// <summary>Closes a connection past <see cref="MaxConnections"/> at once (reset), without reading from it.</summary>
    private void Refuse(TransportConnection accepted)
    {
        Interlocked.Increment(ref _refusedConnections);
        ServerMetrics.Count(ServerMetrics.RejectedConnections, ServerMetrics.ConnectionLimitReason);
        ServerLog.ConnectionRefused(_logger, accepted.RemoteEndPoint, ServerMetrics.ConnectionLimitReason, _connections.Limit);
        accepted.Abort();
        ValueTask disposed = accepted.DisposeAsync();
        if (!disposed.IsCompletedSuccessfully)
        {
            _ = ObserveAsync(disposed);
        }

        static async Task ObserveAsync(ValueTask disposed)
        {
            try
            {
                await disposed.ConfigureAwait(false);
            }
            catch (Exception)
            {
                // Refused and reset: nothing is left to do with a failure to close it.
            }
        }
    }

    /// <summary>
    /// The server's connection limit as the TLS listeners see it: a handshake in progress takes a place (a reservation
    /// in the registry) from its accept until its connection is handed out or closed, so handshakes and open
    /// connections together stay within <see cref="MaxConnections"/>.
    /// </summary>
    private sealed class Admission(FalconetServer server) : IConnectionAdmission
    {
        public bool TryAdmit(TransportConnection accepted)
        {
            if (server._connections.TryReserve())
            {
                return true;
            }

            server.Refuse(accepted);
            return false;
        }

        public void Release() => server._connections.Unreserve();
    }
}
