using System;
using System.Collections.Generic;
using System.Net;
using System.Net.Security;
using System.Net.Sockets;
using System.Threading;
using Falconet.Http;
using Falconet.Transport;
using Microsoft.Extensions.Logging;

namespace Falconet.Server;

/// <summary>Settings of a <see cref="FalconetServer"/>; copied once, when the server starts, so later changes do not affect a started server.</summary>
public sealed class FalconetServerOptions
{
    /// <summary>
    /// The endpoints to listen on with plain HTTP: an <see cref="IPEndPoint"/> (port 0 picks a free port; see
    /// <see cref="FalconetServer.BoundEndpoints"/>), a <see cref="System.Net.Sockets.UnixDomainSocketEndPoint"/> (see
    /// <see cref="UnixSocketPermissions"/>), a <see cref="ListenSocketEndPoint"/> (a socket already listening, such as one
    /// systemd passed: <see cref="SystemdSockets"/>), or a <see cref="ProxyProtocolEndPoint"/> around any of those.
    /// </summary>
    public IList<EndPoint> Endpoints { get; } = new List<EndPoint>();

    /// <summary>
    /// The built-in transport; ignored when <see cref="TransportFactory"/> is set. Null (the default) takes the one measured
    /// cheapest per request that this machine can run (docs/runtime-io.md, "Which transport runs"):
    /// <see cref="TransportKind.IoUring"/> where the kernel allows it, otherwise <see cref="TransportKind.Libuv"/> when the
    /// system's libuv 1.x loads, otherwise <see cref="TransportKind.Sockets"/>; each fallback is logged at information level
    /// with its reason (and, for libuv, the package that would enable it). Naming a transport explicitly makes its absence
    /// an error at start instead: a <see cref="NotSupportedException"/> that says why io_uring cannot be used, or a
    /// missing libuv.
    /// </summary>
    public TransportKind? Transport { get; set; }

    /// <summary>The endpoints that serve HTTPS, each with its TLS settings (see docs/http-server.md, "HTTPS").</summary>
    public IList<HttpsEndpoint> HttpsEndpoints { get; } = new List<HttpsEndpoint>();

    /// <summary>
    /// A transport to use instead of the built-in one (default none). The server binds through it and reads its
    /// <see cref="ITransportFactory.Pools"/>, but never disposes it: dispose it after the server has stopped.
    /// <see cref="Transport"/>, <see cref="IoThreadCount"/> and <see cref="TrackPoolLeaks"/> do not apply to it.
    /// </summary>
    public ITransportFactory? TransportFactory { get; set; }

    /// <summary>Request limits: line, header section, header count, body size and chunk extensions.</summary>
    public HttpLimits Limits { get; set; } = new HttpLimits();

    /// <summary>
    /// The HTTP versions every endpoint serves unless it says otherwise (<see cref="HttpEndpoint"/>, <see cref="HttpsEndpoint.Protocols"/>):
    /// by default <see cref="HttpProtocols.Http1AndHttp2"/>, HTTPS offering h2 and http/1.1 with ALPN, plain HTTP serving
    /// HTTP/1.1 and a client that opens with the HTTP/2 preface (prior knowledge).
    /// </summary>
    public HttpProtocols Protocols { get; set; } = HttpProtocols.Http1AndHttp2;

    /// <summary>HTTP/2 settings and bounds: streams, windows, frame and header block sizes, the flood limits (see docs/http-server.md, "HTTP/2").</summary>
    public Http2Limits Http2 { get; set; } = new Http2Limits();

    /// <summary>
    /// The write-behind bound per connection (default 64 KiB): writes complete at once while buffered, unsent
    /// output is below it; at or above it an asynchronous write, and the next pipelined request, wait for the socket.
    /// </summary>
    public long OutputBufferLimit { get; set; } = 64 * 1024;

    /// <summary>
    /// The most unread request-body bytes the server reads and discards to keep a connection open (default 64 KiB);
    /// a larger remainder closes the connection instead.
    /// </summary>
    public long MaxRequestBodyDrainSize { get; set; } = 64 * 1024;

    /// <summary>
    /// The initial value of <see cref="HttpResponse.AllowSynchronousWrites"/> for every request (default false): lets
    /// the response body stream buffer synchronous writes instead of throwing. A handler may still change it per request.
    /// </summary>
    public bool AllowSynchronousWrites { get; set; }

    /// <summary>
    /// Where connection code runs when an I/O operation completes; null (the default) takes the transport's own
    /// default, the one measured fastest for it: on the completing thread for sockets
    /// (<see cref="IoScheduling.ThreadPool"/>), on the loop thread for libuv (<see cref="IoScheduling.IoThreads"/>).
    /// See docs/http-server.md, "Threads".
    /// </summary>
    public IoScheduling? Scheduling { get; set; }

    /// <summary>
    /// Whether the process's threads run under Linux's SCHED_BATCH policy while the server runs (default
    /// <see cref="Server.BatchScheduling.Auto"/>: where the transport hands completions to other threads, so that those
    /// threads stop preempting each other on every request). Applies to a transport of <see cref="TransportFactory"/> too.
    /// See docs/runtime-io.md, "Threads that wake each other".
    /// </summary>
    public BatchScheduling BatchScheduling { get; set; } = BatchScheduling.Auto;

    /// <summary>
    /// Number of memory pools of the built-in transport, connections spread over them (default: the processor
    /// count, which honours the process's CPU affinity); for libuv the number of event loops, for sockets with
    /// <see cref="IoScheduling.IoThreads"/> the number of I/O threads, one per pool.
    /// </summary>
    public int IoThreadCount { get; set; } = Environment.ProcessorCount;

    /// <summary>
    /// The most connections open at once (default null: derived from the process's file descriptor limit, leaving a
    /// reserve of an eighth of it, at least 64, for the rest of the process). A connection accepted past it is closed at
    /// once with a reset, counted (<c>falconet.server.rejected_connections</c>, reason <c>connection_limit</c>) and
    /// logged at debug level.
    /// </summary>
    public int? MaxConnections { get; set; }

    /// <summary>
    /// How long <see cref="FalconetServer.StopAsync"/> lets in-flight requests finish before aborting them
    /// (default 10 s); it then waits at most <see cref="FalconetServer.AbortGrace"/> more for aborted handlers to return.
    /// </summary>
    public TimeSpan ShutdownTimeout { get; set; } = TimeSpan.FromSeconds(10);

    /// <summary>
    /// How long a connection may wait for the first byte of its next request, the first one included (default
    /// 130 s); then it is closed gracefully. <see cref="Timeout.InfiniteTimeSpan"/> disables it.
    /// </summary>
    public TimeSpan KeepAliveTimeout { get; set; } = TimeSpan.FromSeconds(130);

    /// <summary>
    /// How long a request line and its headers may take to arrive once the first byte of the request has
    /// (default 30 s); then the server answers 408 Request Timeout and closes. <see cref="Timeout.InfiniteTimeSpan"/> disables it.
    /// </summary>
    public TimeSpan RequestHeadersTimeout { get; set; } = TimeSpan.FromSeconds(30);

    /// <summary>
    /// Whether CONNECT requests reach the application (default false). Falconet does not tunnel, so by default the
    /// server answers CONNECT itself with 501 Not Implemented and closes; set it only in an application that handles
    /// CONNECT (an authority-form target, <see cref="HttpRequest.Host"/>) and takes over the connection itself.
    /// </summary>
    public bool AllowConnect { get; set; }

    /// <summary>
    /// The least rate a request body must arrive at while the server waits for it (default 240 bytes/s after a 5 s grace
    /// period, as Kestrel's): time the handler spends not reading does not count. Below it the body read fails with a
    /// <see cref="Http.BadHttpRequestException"/> of status 408, answered 408 when the response has not started, and the
    /// connection closes. Null turns it off.
    /// </summary>
    public MinDataRate? MinRequestBodyDataRate { get; set; } = new(240, TimeSpan.FromSeconds(5));

    /// <summary>
    /// The least rate a client must read the response at (default 240 bytes/s, with a 5 s grace period): a send that
    /// waits for the client must complete within the time its bytes take at this rate, or 5 s, whichever is longer;
    /// otherwise the connection is reset. It also ends a client that pipelines requests and never reads the answers.
    /// Null turns it off.
    /// </summary>
    public MinDataRate? MinResponseDataRate { get; set; } = new(240, TimeSpan.FromSeconds(5));

    /// <summary>
    /// How long a pool of the transport must rent nothing before its free slabs are given back to the garbage collector
    /// (default 10 s), and how often again while it stays idle; <see cref="Timeout.InfiniteTimeSpan"/> keeps every slab.
    /// </summary>
    public TimeSpan PoolIdleTimeout { get; set; } = TimeSpan.FromSeconds(10);

    /// <summary>
    /// How long a stopping server keeps serving as usual after it turned unready (default zero): <see cref="FalconetServer.IsReady"/>
    /// turns false and <see cref="Draining"/> runs when the stop begins, then for this long the server still accepts connections
    /// and answers every request normally, so that load balancers whose health checks see it unready take it out of rotation
    /// before any connection is closed. Set it to the time the slowest load balancer needs to notice (for example HAProxy's
    /// <c>inter</c> times <c>fall</c>, or a Kubernetes readiness probe's <c>periodSeconds</c> times <c>failureThreshold</c>).
    /// The shutdown timeout starts after it. See docs/deployment.md.
    /// </summary>
    public TimeSpan DrainDelay { get; set; }

    /// <summary>
    /// How long a keep-alive connection that is idle when the drain begins (after <see cref="DrainDelay"/>) may stay open
    /// (default 1 s; zero closes idle connections at once). HTTP/1.1 has no way to close an idle connection without racing a
    /// request its client sends at that moment: within this time such a request is answered, with <c>Connection: close</c>,
    /// and only a connection idle for the whole of it is closed. Clients that send at least once in it never see a close
    /// under a request. See docs/deployment.md.
    /// </summary>
    public TimeSpan DrainIdleTimeout { get; set; } = TimeSpan.FromSeconds(1);

    /// <summary>
    /// Called once when the server begins to stop, before <see cref="DrainDelay"/> (default none): where an application turns
    /// its own readiness off or tells a service registry. Runs on the thread that called <see cref="FalconetServer.StopAsync"/>;
    /// an exception it throws is logged and the stop goes on.
    /// </summary>
    public Action? Draining { get; set; }

    /// <summary>
    /// Binds the built-in transport's IP listeners with SO_REUSEPORT (default false), so that several processes (an old and a new
    /// one during a restart, or one per core) listen on one port and the kernel spreads new connections over them. See
    /// docs/deployment.md for how the kernel spreads them and what happens to a listener's queue when its process exits.
    /// </summary>
    public bool ReusePort { get; set; }

    /// <summary>
    /// The permissions a Unix domain socket endpoint's file gets once bound (default null: what the process's umask leaves);
    /// a client needs write permission to connect, so <c>UserRead | UserWrite | GroupRead | GroupWrite</c> lets a proxy in the
    /// socket file's group connect. See docs/deployment.md.
    /// </summary>
    public System.IO.UnixFileMode? UnixSocketPermissions { get; set; }

    /// <summary>
    /// Applies the forwarding headers of an HTTP reverse proxy (<c>X-Forwarded-For</c>, <c>-Proto</c>, <c>-Host</c>, RFC 7239
    /// <c>Forwarded</c>) to <see cref="Http.HttpContext.RemoteEndPoint"/>, <see cref="Http.HttpRequest.Scheme"/> and
    /// <see cref="Http.HttpRequest.Host"/>, only on connections from the policy's trusted proxies (default null: the headers are
    /// left to the application). See docs/deployment.md.
    /// </summary>
    public ForwardedHeadersPolicy? ForwardedHeaders { get; set; }

    /// <summary>Where the server logs (default: nowhere).</summary>
    public ILoggerFactory? LoggerFactory { get; set; }

    /// <summary>Records who rented each pool block of the built-in transport, so a leak report names it (tests; costs a stack trace per rent).</summary>
    public bool TrackPoolLeaks { get; set; }

    /// <summary>The clock of timeouts and shutdown waits (tests drive a manual one).</summary>
    internal TimeProvider TimeProvider { get; set; } = TimeProvider.System;

    /// <summary>How often the heartbeat checks connection deadlines (default 1 s): a timeout fires up to this much late.</summary>
    internal TimeSpan HeartbeatInterval { get; set; } = TimeSpan.FromSeconds(1);

    internal void Validate()
    {
        if (Endpoints.Count == 0 && HttpsEndpoints.Count == 0)
        {
            throw new InvalidOperationException("Add at least one endpoint to FalconetServerOptions.Endpoints or HttpsEndpoints.");
        }

        ArgumentNullException.ThrowIfNull(Limits);
        ArgumentNullException.ThrowIfNull(TimeProvider);
        ArgumentNullException.ThrowIfNull(Http2);
        Http2.Validate();
        ValidateProtocols(Protocols, nameof(Protocols));
        for (int i = 0; i < Endpoints.Count; i++)
        {
            ValidateEndpoint(Endpoints[i], $"Endpoints[{i}]");
            if ((Endpoints[i] is ProxyProtocolEndPoint proxy ? proxy.EndPoint : Endpoints[i]) is HttpEndpoint http)
            {
                ValidateProtocols(http.Protocols, $"Endpoints[{i}].Protocols");
            }
        }

        for (int i = 0; i < HttpsEndpoints.Count; i++)
        {
            ValidateEndpoint(HttpsEndpoints[i].EndPoint, $"HttpsEndpoints[{i}].EndPoint");
        }

        ForwardedHeaders?.Validate(nameof(ForwardedHeaders), FirstIpEndpoint());
        ArgumentOutOfRangeException.ThrowIfLessThan(DrainDelay, TimeSpan.Zero, nameof(DrainDelay));
        ArgumentOutOfRangeException.ThrowIfLessThan(DrainIdleTimeout, TimeSpan.Zero, nameof(DrainIdleTimeout));
        for (int i = 0; i < HttpsEndpoints.Count; i++)
        {
            HttpsEndpoint https = HttpsEndpoints[i];
            HttpProtocols protocols = https.Protocols ?? Protocols;
            ValidateProtocols(protocols, $"HttpsEndpoints[{i}].Protocols");
            IList<SslApplicationProtocol> offered = https.Tls.ApplicationProtocols ?? [];
            foreach (SslApplicationProtocol protocol in offered)
            {
                if (!FalconetServer.Serves(protocol))
                {
                    throw new InvalidOperationException(
                        $"HttpsEndpoints[{i}].Tls.ApplicationProtocols offers '{protocol}', which the server does not serve (it serves h2 and http/1.1).");
                }
            }

            if (protocols == HttpProtocols.Http2 && !offered.Contains(SslApplicationProtocol.Http2))
            {
                // RFC 9113 section 3.2: over TLS, HTTP/2 is chosen with ALPN only.
                throw new InvalidOperationException(
                    $"HttpsEndpoints[{i}] serves HTTP/2 only, which a TLS client can reach only through ALPN h2, but its Tls.ApplicationProtocols do not offer h2.");
            }

            if (offered.Count != 0 && ServedOver(offered, protocols).Count == 0)
            {
                throw new InvalidOperationException(
                    $"HttpsEndpoints[{i}].Tls.ApplicationProtocols offer none of the protocols the endpoint serves ({protocols}).");
            }

            System.Security.Authentication.SslProtocols tls = https.Tls.EnabledProtocols;
            if ((protocols & HttpProtocols.Http2) != 0 && offered.Contains(SslApplicationProtocol.Http2)
                && tls != System.Security.Authentication.SslProtocols.None
                && (tls & (System.Security.Authentication.SslProtocols.Tls12 | System.Security.Authentication.SslProtocols.Tls13)) == 0)
            {
                throw new InvalidOperationException(
                    $"HttpsEndpoints[{i}] serves HTTP/2, which needs TLS 1.2 or later (RFC 9113 section 9.2), but its Tls.EnabledProtocols are {tls}.");
            }
        }

        ArgumentOutOfRangeException.ThrowIfLessThan(OutputBufferLimit, 1, nameof(OutputBufferLimit));
        ArgumentOutOfRangeException.ThrowIfNegative(MaxRequestBodyDrainSize, nameof(MaxRequestBodyDrainSize));
        if (MaxConnections is int maxConnections)
        {
            ArgumentOutOfRangeException.ThrowIfLessThan(maxConnections, 1, nameof(MaxConnections));
        }

        ArgumentOutOfRangeException.ThrowIfLessThan(ShutdownTimeout, TimeSpan.Zero, nameof(ShutdownTimeout));
        ArgumentOutOfRangeException.ThrowIfLessThanOrEqual(HeartbeatInterval, TimeSpan.Zero, nameof(HeartbeatInterval));
        ValidateTimeout(KeepAliveTimeout, nameof(KeepAliveTimeout));
        ValidateTimeout(RequestHeadersTimeout, nameof(RequestHeadersTimeout));
        ValidateTimeout(PoolIdleTimeout, nameof(PoolIdleTimeout));
        if (!Enum.IsDefined(BatchScheduling))
        {
            throw new ArgumentOutOfRangeException(nameof(BatchScheduling), BatchScheduling, "Unknown batch scheduling.");
        }

        if (TransportFactory is not null)
        {
            return;
        }

        ArgumentOutOfRangeException.ThrowIfLessThan(IoThreadCount, 1, nameof(IoThreadCount));
        if (Scheduling is { } scheduling && !Enum.IsDefined(scheduling))
        {
            throw new ArgumentOutOfRangeException(nameof(Scheduling), Scheduling, "Unknown scheduling.");
        }

        if (Transport is { } transport && !Enum.IsDefined(transport))
        {
            throw new ArgumentOutOfRangeException(nameof(Transport), Transport, "Unknown transport.");
        }
    }

    /// <summary>A protocol set that names at least one protocol and nothing else.</summary>
    private static void ValidateProtocols(HttpProtocols protocols, string what)
    {
        if (protocols == HttpProtocols.None || (protocols & ~HttpProtocols.Http1AndHttp2) != 0)
        {
            throw new InvalidOperationException($"{what} must be Http1, Http2 or Http1AndHttp2, not {protocols}.");
        }
    }

    /// <summary>The ALPN protocols of <paramref name="offered"/> that an endpoint serving <paramref name="protocols"/> runs, in their order.</summary>
    internal static List<SslApplicationProtocol> ServedOver(IList<SslApplicationProtocol> offered, HttpProtocols protocols)
    {
        var served = new List<SslApplicationProtocol>(offered.Count);
        foreach (SslApplicationProtocol protocol in offered)
        {
            if ((protocol == SslApplicationProtocol.Http2 && (protocols & HttpProtocols.Http2) != 0)
                || (protocol == SslApplicationProtocol.Http11 && (protocols & HttpProtocols.Http1) != 0))
            {
                served.Add(protocol);
            }
        }

        return served;
    }

    /// <summary>The name of the first endpoint whose peers have IP addresses (any but a Unix domain socket), or null.</summary>
    private string? FirstIpEndpoint()
    {
        for (int i = 0; i < Endpoints.Count; i++)
        {
            if (!IsUnixSocket(Endpoints[i]))
            {
                return $"Endpoints[{i}]";
            }
        }

        for (int i = 0; i < HttpsEndpoints.Count; i++)
        {
            if (!IsUnixSocket(HttpsEndpoints[i].EndPoint))
            {
                return $"HttpsEndpoints[{i}]";
            }
        }

        return null;

        static bool IsUnixSocket(EndPoint endpoint) => (endpoint is ProxyProtocolEndPoint proxy ? proxy.EndPoint : endpoint) is UnixDomainSocketEndPoint;
    }

    /// <summary>Throws when an endpoint is of a kind no transport listens on, or its PROXY settings cannot be honoured; the message names it.</summary>
    private static void ValidateEndpoint(EndPoint? endpoint, string name)
    {
        EndPoint? listenOn = endpoint is ProxyProtocolEndPoint proxy ? proxy.EndPoint : endpoint;
        if (listenOn is not (IPEndPoint or UnixDomainSocketEndPoint or ListenSocketEndPoint))
        {
            throw new InvalidOperationException(
                $"{name} is {(endpoint is null ? "null" : endpoint.GetType().Name)}: listen on an IPEndPoint, a UnixDomainSocketEndPoint or a ListenSocketEndPoint, or a ProxyProtocolEndPoint around one of them.");
        }

        (endpoint as ProxyProtocolEndPoint)?.Validate(name);
    }

    /// <summary>A copy of everything the server reads, limits included, so that changing these options later has no effect on it.</summary>
    internal FalconetServerOptions Copy()
    {
        var copy = new FalconetServerOptions
        {
            Transport = Transport,
            TransportFactory = TransportFactory,
            Limits = CopyLimits(Limits),
            Protocols = Protocols,
            Http2 = Http2.Copy(),
            OutputBufferLimit = OutputBufferLimit,
            MaxRequestBodyDrainSize = MaxRequestBodyDrainSize,
            Scheduling = Scheduling,
            BatchScheduling = BatchScheduling,
            AllowSynchronousWrites = AllowSynchronousWrites,
            AllowConnect = AllowConnect,
            IoThreadCount = IoThreadCount,
            MaxConnections = MaxConnections,
            ShutdownTimeout = ShutdownTimeout,
            KeepAliveTimeout = KeepAliveTimeout,
            RequestHeadersTimeout = RequestHeadersTimeout,
            MinRequestBodyDataRate = MinRequestBodyDataRate,
            MinResponseDataRate = MinResponseDataRate,
            PoolIdleTimeout = PoolIdleTimeout,
            LoggerFactory = LoggerFactory,
            TrackPoolLeaks = TrackPoolLeaks,
            TimeProvider = TimeProvider,
            HeartbeatInterval = HeartbeatInterval,
            DrainDelay = DrainDelay,
            DrainIdleTimeout = DrainIdleTimeout,
            Draining = Draining,
            ReusePort = ReusePort,
            UnixSocketPermissions = UnixSocketPermissions,
            ForwardedHeaders = ForwardedHeaders?.Copy(),
        };
        foreach (EndPoint endpoint in Endpoints)
        {
            copy.Endpoints.Add(CopyEndpoint(endpoint));
        }

        foreach (HttpsEndpoint https in HttpsEndpoints)
        {
            copy.HttpsEndpoints.Add(new HttpsEndpoint(CopyEndpoint(https.EndPoint), https.Tls.Copy()) { Protocols = https.Protocols });
        }

        return copy;
    }

    private static EndPoint CopyEndpoint(EndPoint endpoint) => endpoint is ProxyProtocolEndPoint proxy ? proxy.Copy() : endpoint;

    /// <summary>Copies every limit (a test checks by reflection that no settable property is missed).</summary>
    internal static HttpLimits CopyLimits(HttpLimits limits) => new()
    {
        MaxRequestLineSize = limits.MaxRequestLineSize,
        MaxRequestHeadersSize = limits.MaxRequestHeadersSize,
        MaxRequestHeaderCount = limits.MaxRequestHeaderCount,
        MaxRequestBodySize = limits.MaxRequestBodySize,
        MaxChunkExtensionSize = limits.MaxChunkExtensionSize,
    };

    private static void ValidateTimeout(TimeSpan timeout, string name)
    {
        if (timeout != Timeout.InfiniteTimeSpan)
        {
            ArgumentOutOfRangeException.ThrowIfLessThanOrEqual(timeout, TimeSpan.Zero, name);
        }
    }
}
