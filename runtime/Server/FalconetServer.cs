using System;
using System.Collections.Generic;
using System.Globalization;
using System.IO;
using System.Net;
using System.Net.Sockets;
using System.Threading;
using System.Threading.Tasks;
using Falconet.Buffers;
using Falconet.Http;
using Falconet.Http.Http1;
using Falconet.Timekeeping;
using Falconet.Transport;
using Falconet.Transport.Proxy;
using Falconet.Transport.Tls;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Logging.Abstractions;

namespace Falconet.Server;

/// <summary>
/// An HTTP/1.1 and HTTP/2 server: listens on the configured endpoints, runs one connection (<see cref="HttpConnection"/>,
/// or <see cref="Http.Http2.Http2Connection"/> for HTTP/2) per accepted
/// connection and calls the application once per request. Start with <see cref="StartAsync"/>, stop gracefully with
/// <see cref="StopAsync"/> (or dispose).
/// </summary>
/// <remarks>
/// The server holds the listeners, the accept loops (<c>FalconetServer.Accept.cs</c>) and the shutdown sequence; the
/// open connections are in a <see cref="ConnectionRegistry{TConnection}"/>, and one <see cref="Heartbeat"/> checks their
/// deadlines. It sees only the transport contract: an HTTPS endpoint is a listener of the TLS decorator over the same
/// transport, which hands out connections whose handshake completed.
/// </remarks>
public partial class FalconetServer : IAsyncDisposable
{
    /// <summary>
    /// How long <see cref="StopAsync"/> waits, after aborting what outlived <see cref="FalconetServerOptions.ShutdownTimeout"/>,
    /// for the aborted handlers to return (1 s); a handler still running then is left behind.
    /// </summary>
    public static readonly TimeSpan AbortGrace = TimeSpan.FromSeconds(1);

    /// <summary>The first pause of an accept loop that ran out of file descriptors; it doubles up to <see cref="MaxAcceptBackoff"/>.</summary>
    internal static readonly TimeSpan InitialAcceptBackoff = TimeSpan.FromMilliseconds(10);

    /// <summary>The longest pause of an accept loop that runs out of file descriptors again and again.</summary>
    internal static readonly TimeSpan MaxAcceptBackoff = TimeSpan.FromSeconds(1);

    private readonly FalconetServerOptions _options;
    private readonly IHttpApplication _application;
    private readonly HeaderSetBinding _headerSet;
    private readonly ILogger _logger;
    private readonly CancellationTokenSource _shutdown = new();
    private ConnectionRegistry<ServerConnection> _connections = new();

    // What each listener's endpoint serves; for an HTTPS one, ALPN chose among these already.
    private readonly Dictionary<IConnectionListener, HttpProtocols> _listenerProtocols = new();
    private readonly List<IConnectionListener> _listeners = new();
    private readonly List<Task> _acceptLoops = new();
    private readonly List<IPEndPoint> _boundEndpoints = new();
    private readonly List<IPEndPoint> _boundHttpsEndpoints = new();
    private readonly List<TlsEngine> _httpsEngines = new();
    private readonly List<EndPoint> _listeningOn = new();
    private readonly List<string> _listeningUrls = new();
    private readonly List<UnixSocketFile> _unixSocketFiles = new();
    private readonly Lock _gate = new();
    private FalconetServerOptions? _running;
    private ITransportFactory? _transport;
    private bool _holdsBatchPolicy;
    private IAsyncDisposable? _ownedTransport;
    private HttpConnectionSettings? _settings;
    private Heartbeat? _heartbeat;
    private IdleMemory? _idleMemory;
    private Task? _stopTask;
    private long _peakConnectionOutput;
    private long _refusedConnections;
    private long _refusedByTransportBefore;
    private int _state;
    private volatile bool _draining;
    private int _drainingNotified;
    private volatile bool _started;

    /// <summary>Creates a server that calls <paramref name="application"/> for every request.</summary>
    public FalconetServer(FalconetServerOptions options, IHttpApplication application)
        : this(options, application, HeaderSetBinding.BuiltIn)
    {
    }

    private protected FalconetServer(FalconetServerOptions options, IHttpApplication application, HeaderSetBinding headerSet)
    {
        ArgumentNullException.ThrowIfNull(options);
        ArgumentNullException.ThrowIfNull(application);
        _options = options;
        _application = application;
        _headerSet = headerSet;
        _logger = options.LoggerFactory?.CreateLogger("Falconet.Server") ?? NullLogger.Instance;
    }

    /// <summary>Creates a server that calls <paramref name="handler"/> for every request.</summary>
    public FalconetServer(FalconetServerOptions options, Func<HttpContext, ValueTask> handler)
        : this(options, new DelegateHttpApplication(handler))
    {
    }

    /// <summary>The options given to the constructor; <see cref="StartAsync"/> copies them, so changing them later has no effect on a started server.</summary>
    public FalconetServerOptions Options => _options;

    /// <summary>The TCP endpoints actually bound (port 0 resolved), in the order of <see cref="FalconetServerOptions.Endpoints"/> (Unix domain sockets are in <see cref="ListeningOn"/>).</summary>
    public IReadOnlyList<IPEndPoint> BoundEndpoints => _boundEndpoints;

    /// <summary>The TCP endpoints of HTTPS actually bound (port 0 resolved), in the order of <see cref="FalconetServerOptions.HttpsEndpoints"/>.</summary>
    public IReadOnlyList<IPEndPoint> BoundHttpsEndpoints => _boundHttpsEndpoints;

    /// <summary>
    /// The TLS engine each HTTPS endpoint runs, in the order of <see cref="FalconetServerOptions.HttpsEndpoints"/>:
    /// <see cref="TlsEngine.SslStream"/> or <see cref="TlsEngine.OpenSsl"/>, <see cref="TlsEngine.Auto"/> resolved at start
    /// (<see cref="TlsServerOptions.Engine"/>).
    /// </summary>
    public IReadOnlyList<TlsEngine> HttpsEngines => _httpsEngines;

    /// <summary>Every endpoint the server listens on, plain ones first, then HTTPS, each in the order of its list: an <see cref="IPEndPoint"/> (port 0 resolved) or a <see cref="System.Net.Sockets.UnixDomainSocketEndPoint"/>.</summary>
    public IReadOnlyList<EndPoint> ListeningOn => _listeningOn;

    /// <summary><see cref="ListeningOn"/> as URLs, in the same order: "http://127.0.0.1:8080", "https://[::1]:8443", "http://unix:/run/app.sock".</summary>
    internal IReadOnlyList<string> ListeningUrls => _listeningUrls;

    /// <summary>
    /// True from the end of <see cref="StartAsync"/> until the stop begins: what a readiness probe reports (docs/deployment.md).
    /// It turns false before <see cref="FalconetServerOptions.DrainDelay"/>, while the server still serves, so that load
    /// balancers take it out of rotation before any connection closes.
    /// </summary>
    public bool IsReady => _started && !_draining;

    /// <summary>Requests started since the server started.</summary>
    /// <remarks>
    /// Each connection counts its own (a shared counter costs every request a locked increment, and its cache line travels
    /// between the cores that serve requests); the total is summed here, under the connection registry's lock.
    /// </remarks>
    public long RequestCount => _connections.Sum(static connection => connection.RequestCount);

    /// <summary>Connections open right now.</summary>
    public int ConnectionCount => _connections.Count;

    /// <summary>
    /// The most connections the server keeps open at once (<see cref="FalconetServerOptions.MaxConnections"/>, or the
    /// limit derived from the process's file descriptor limit when that is null); known once started.
    /// </summary>
    public int MaxConnections => _connections.Limit;

    /// <summary>Connections refused since the server started because <see cref="MaxConnections"/> were open (by the server, or by its transport at accept: <see cref="ITransportFactory.RefusedConnections"/>).</summary>
    public long RefusedConnectionCount =>
        Interlocked.Read(ref _refusedConnections) + (_transport is null ? 0 : _transport.RefusedConnections - _refusedByTransportBefore);

    /// <summary>The most output bytes any closed connection held buffered at once (write-behind diagnostics).</summary>
    public long PeakConnectionOutputBuffered => Interlocked.Read(ref _peakConnectionOutput);

    /// <summary>The transport the server runs on (null before <see cref="StartAsync"/>): the options' own, or the built-in one it created.</summary>
    public ITransportFactory? Transport => _transport;

    /// <summary>Binds every endpoint and starts accepting connections.</summary>
    /// <exception cref="InvalidOperationException">The server was already started.</exception>
    /// <exception cref="NotSupportedException">The selected transport is not available in this build.</exception>
    public async Task StartAsync(CancellationToken cancellationToken = default)
    {
        FalconetServerOptions options = _options.Copy();
        options.Validate();
        if (Interlocked.CompareExchange(ref _state, 1, 0) != 0)
        {
            throw new InvalidOperationException("The server has already been started.");
        }

        _running = options;
        _settings = new HttpConnectionSettings(_application, options.Limits, options.OutputBufferLimit,
            options.MaxRequestBodyDrainSize, options.KeepAliveTimeout, options.RequestHeadersTimeout,
            options.TimeProvider, _logger, _shutdown.Token, OnConnectionClosed)
        {
            AllowSynchronousWrites = options.AllowSynchronousWrites,
            HeaderSet = _headerSet,
            AllowConnect = options.AllowConnect,
            MinRequestBodyDataRate = options.MinRequestBodyDataRate?.ToLimit(options.TimeProvider) ?? default,
            MinResponseDataRate = options.MinResponseDataRate?.ToLimit(options.TimeProvider) ?? default,
            MinRequestBodyRate = options.MinRequestBodyDataRate,
            MinResponseRate = options.MinResponseDataRate,
            Http2 = options.Http2,
            DrainIdleTimeout = HttpConnectionSettings.ToTimestampTicks(options.DrainIdleTimeout, options.TimeProvider),
            ForwardedHeaders = options.ForwardedHeaders,
        };
        DateHeaderValues.Acquire();
        try
        {
            // Derived before the transport opens its own descriptors; the reserve covers those.
            _connections = new ConnectionRegistry<ServerConnection>(options.MaxConnections ?? DescriptorLimit.DefaultMaxConnections());
            ServerLog.ConnectionLimit(_logger, _connections.Limit, DescriptorLimit.SoftLimit() ?? -1);
            _transport = options.TransportFactory ?? BuiltInTransports.Create(
                options.Transport ?? BuiltInTransports.ChooseDefault(BuiltInTransports.IoUringUnavailableReason, BuiltInTransports.LibuvAvailable, _logger), options, _connections.Limit);
            if (options.TransportFactory is null)
            {
                _ownedTransport = _transport as IAsyncDisposable;
            }

            _refusedByTransportBefore = _transport.RefusedConnections;
            TakeBatchPolicy(options.BatchScheduling, _transport);

            // Loads what renting a block needs while descriptors are plentiful: an assembly that fails to load when the
            // process is out of them stays failed for its whole life, and no connection could rent again.
            foreach (SlabMemoryPool pool in _transport.Pools)
            {
                pool.Return(pool.Rent());
            }

            // Decorators compose over the transport per endpoint: PROXY (reads the header first), then TLS, then HTTP. A TLS or
            // PROXY listener's connections in progress take places of the connection limit.
            var context = new ListenerContext(options.TimeProvider, options.HeartbeatInterval, _logger, new Admission(this));
            foreach (EndPoint endpoint in options.Endpoints)
            {
                IConnectionListener listener = await BindAsync(endpoint, tls: null, context, options, cancellationToken).ConfigureAwait(false);
                _listenerProtocols[listener] = (endpoint is ProxyProtocolEndPoint proxy ? proxy.EndPoint : endpoint) is HttpEndpoint http
                    ? http.Protocols
                    : options.Protocols;
                if (listener.EndPoint is IPEndPoint bound)
                {
                    _boundEndpoints.Add(bound);
                }

                ServerLog.Listening(_logger, _listeningOn[^1], Describe(endpoint));
            }

            foreach (HttpsEndpoint https in options.HttpsEndpoints)
            {
                // ALPN offers what the endpoint serves, in the order of the TLS options (h2 first by default).
                HttpProtocols protocols = https.Protocols ?? options.Protocols;
                https.Tls.ApplicationProtocols = FalconetServerOptions.ServedOver(https.Tls.ApplicationProtocols, protocols);
                IConnectionListener listener = await BindAsync(https.EndPoint, https.Tls, context, options, cancellationToken).ConfigureAwait(false);
                _listenerProtocols[listener] = protocols;
                if (listener.EndPoint is IPEndPoint bound)
                {
                    _boundHttpsEndpoints.Add(bound);
                }

                TlsLog.ListeningHttps(_logger, _listeningOn[^1], Describe(https.EndPoint));
            }
        }
        catch
        {
            await StopAsync(CancellationToken.None).ConfigureAwait(false);
            throw;
        }

        if (options.PoolIdleTimeout != Timeout.InfiniteTimeSpan)
        {
            _idleMemory = new IdleMemory(_transport!.Pools,
                (long)(options.PoolIdleTimeout.TotalSeconds * options.TimeProvider.TimestampFrequency), options.TimeProvider.GetTimestamp());
        }

        // One heartbeat for the whole server: no timer per connection, no allocation per request.
        _heartbeat = new Heartbeat(options.TimeProvider, options.HeartbeatInterval, OnHeartbeat);
        foreach (IConnectionListener listener in _listeners)
        {
            _acceptLoops.Add(AcceptLoopAsync(listener));
        }

        _started = true;
    }

    /// <summary>
    /// Stops gracefully: stops accepting and closes idle connections (FIN), lets in-flight requests finish within
    /// <see cref="FalconetServerOptions.ShutdownTimeout"/> (or until <paramref name="cancellationToken"/> fires),
    /// then aborts what is left (RST) and waits at most <see cref="AbortGrace"/> for those handlers to return.
    /// Calling it again returns the same task.
    /// </summary>
    public Task StopAsync(CancellationToken cancellationToken = default)
    {
        lock (_gate)
        {
            if (_state == 0)
            {
                _state = 2;
                return Task.CompletedTask;
            }

            if (_stopTask is not null)
            {
                return _stopTask;
            }

            // Unready at once, before the caller goes on: a readiness probe answered from now on says so.
            _draining = true;
        }

        if (Interlocked.Exchange(ref _drainingNotified, 1) == 0)
        {
            try
            {
                _running?.Draining?.Invoke();
            }
            catch (Exception exception)
            {
                ServerLog.DrainingCallbackFailed(_logger, exception);
            }
        }

        lock (_gate)
        {
            _stopTask ??= Task.Run(() => StopCoreAsync(cancellationToken), CancellationToken.None);
            return _stopTask;
        }
    }

    /// <summary>
    /// Listens on <paramref name="endpoint"/> through the decorators it asks for: the PROXY decorator for a
    /// <see cref="ProxyProtocolEndPoint"/>, then TLS when <paramref name="tls"/> is given. A Unix domain socket's stale file is
    /// removed first, and its file gets the configured permissions.
    /// </summary>
    private async Task<IConnectionListener> BindAsync(EndPoint endpoint, TlsServerOptions? tls, ListenerContext context,
        FalconetServerOptions options, CancellationToken cancellationToken)
    {
        ITransportFactory factory = _transport!;
        EndPoint listenOn = endpoint;
        if (endpoint is ProxyProtocolEndPoint proxy)
        {
            factory = new ProxyTransportFactory(factory, proxy, context);
            listenOn = proxy.EndPoint;
        }

        if (tls is not null)
        {
            try
            {
                factory = new TlsTransportFactory(factory, tls, context);
            }
            catch (InvalidOperationException exception)
            {
                // A TLS option the endpoint cannot honour (a certificate, its key, a protocol set): the failure names the endpoint.
                throw new InvalidOperationException($"The HTTPS endpoint {FormatUrl(listenOn, https: true)} cannot start: {exception.Message}", exception);
            }
        }

        UnixSocketFile? file = listenOn is UnixDomainSocketEndPoint unix ? UnixSocketFile.Prepare(unix, takeOver: options.ReusePort) : null;
        IConnectionListener listener;
        try
        {
            listener = await factory.BindAsync(file?.BindTo ?? listenOn, cancellationToken).ConfigureAwait(false);
        }
        catch (Exception exception) when (exception is System.Net.Sockets.SocketException or IOException)
        {
            // A failure (the port is taken, the address is not the machine's, the directory is missing) names the endpoint.
            throw new IOException($"Falconet cannot bind {FormatUrl(listenOn, tls is not null)}: {exception.Message}", exception);
        }

        _listeners.Add(listener);
        _listeningOn.Add(file?.EndPoint ?? listener.EndPoint);
        _listeningUrls.Add(FormatUrl(_listeningOn[^1], tls is not null));
        if (factory is TlsTransportFactory secured)
        {
            secured.LogEngine(_listeningUrls[^1]);
            _httpsEngines.Add(secured.Settings.Engine);
        }
        if (file is not null)
        {
            _unixSocketFiles.Add(file);
            file.Bound(options.UnixSocketPermissions);
        }

        return listener;
    }

    /// <summary>An endpoint as a URL: "http://127.0.0.1:8080", "https://[::1]:8443", "http://unix:/run/app.sock".</summary>
    internal static string FormatUrl(EndPoint endpoint, bool https)
    {
        string scheme = https ? "https" : "http";
        return endpoint is UnixDomainSocketEndPoint unix
            ? $"{scheme}://unix:{unix}"
            : string.Create(CultureInfo.InvariantCulture, $"{scheme}://{endpoint}");
    }

    /// <summary>What the log says of an endpoint besides its address: an adopted socket's name, the PROXY protocol.</summary>
    private static string Describe(EndPoint endpoint)
    {
        EndPoint listenOn = endpoint is ProxyProtocolEndPoint proxy ? proxy.EndPoint : endpoint;
        string adopted = listenOn is ListenSocketEndPoint socket ? $" (adopted {socket})" : string.Empty;
        return endpoint is ProxyProtocolEndPoint ? adopted + " (PROXY protocol)" : adopted;
    }

    /// <summary>Blocks rented from the transport's pools and not yet returned: 0 once the server has stopped and every connection ended.</summary>
    public long BlocksOutstanding => SumOverPools(static pool => pool.BlocksOutstanding);

    /// <summary>Slabs the transport's pools have allocated since the server started (each 128 KiB).</summary>
    public long PoolSlabsAllocated => SumOverPools(static pool => pool.SlabsAllocated);

    /// <summary>Slabs the transport's pools have given back after they were idle.</summary>
    public long PoolSlabsReleased => SumOverPools(static pool => pool.SlabsReleased);

    /// <summary>Bytes of slabs the transport's pools hold now.</summary>
    public long PoolBytesReserved => SumOverPools(static pool => pool.BytesReserved);

    /// <summary>Waits until every block of every I/O pool is back (tests call this after stopping the server).</summary>
    /// <exception cref="PoolLeakException">Blocks are still out after <paramref name="timeout"/>; the message lists who rented them.</exception>
    public async ValueTask WaitForAllBlocksReturnedAsync(TimeSpan timeout)
    {
        ITransportFactory? transport = _transport;
        if (transport is null)
        {
            return;
        }

        foreach (SlabMemoryPool pool in transport.Pools)
        {
            await pool.WaitForAllReturnedAsync(timeout).ConfigureAwait(false);
        }
    }

    /// <summary>Stops the server (see <see cref="StopAsync"/>).</summary>
    public async ValueTask DisposeAsync()
    {
        await StopAsync(CancellationToken.None).ConfigureAwait(false);
        _shutdown.Dispose();
    }

    /// <summary>Puts the process's threads under SCHED_BATCH where <paramref name="setting"/> asks for it (<see cref="BatchScheduling"/>).</summary>
    /// <exception cref="NotSupportedException"><see cref="BatchScheduling.On"/>, and the policy cannot be set here.</exception>
    private void TakeBatchPolicy(BatchScheduling setting, ITransportFactory transport)
    {
        bool wanted = setting == BatchScheduling.On
            || (setting == BatchScheduling.Auto && OperatingSystem.IsLinux() && transport.HandsOffCompletions);
        if (!wanted)
        {
            return;
        }

        string? refused = BatchPolicy.Enter();
        if (refused is null)
        {
            _holdsBatchPolicy = true;
            ServerLog.BatchScheduling(_logger, setting == BatchScheduling.On ? "BatchScheduling.On" : "the transport hands completions to other threads");
        }
        else if (setting == BatchScheduling.On)
        {
            throw new NotSupportedException($"BatchScheduling.On cannot be honoured: {refused}.");
        }
        else
        {
            ServerLog.BatchSchedulingRefused(_logger, refused);
        }
    }

    private long SumOverPools(Func<SlabMemoryPool, long> value)
    {
        long total = 0;
        if (_transport is not null)
        {
            foreach (SlabMemoryPool pool in _transport.Pools)
            {
                total += value(pool);
            }
        }

        return total;
    }

    private async Task StopCoreAsync(CancellationToken cancellationToken)
    {
        TimeProvider clock = _running?.TimeProvider ?? TimeProvider.System;
        await DrainAsync(clock, cancellationToken).ConfigureAwait(false);
        Volatile.Write(ref _state, 2);
        ServerLog.Stopping(_logger);
        foreach (IConnectionListener listener in _listeners)
        {
            await listener.UnbindAsync().ConfigureAwait(false);
        }

        // Only the file this server bound: a newer process may have taken the path over meanwhile.
        foreach (UnixSocketFile file in _unixSocketFiles)
        {
            file.Remove();
        }

        // Unbound listeners hand out nothing more (a TLS listener has closed the handshakes it held): once the accept
        // loops end, every connection the server will ever run is registered.
        await Task.WhenAll(_acceptLoops).ConfigureAwait(false);

        Task allClosed = _connections.WhenEmptyAsync();

        // Cancelled before idle connections are looked at: a connection about to wait reads it after publishing
        // that it waits, so each one either closes by itself or is closed here. Busy ones close after their request.
        _shutdown.Cancel();
        _connections.ForEach(_logger, static (connection, logger) =>
        {
            // One connection's failure must not end the stop for the others (they would be left open until the timeout).
            try
            {
                connection.CloseIfIdle();
            }
            catch (Exception exception)
            {
                ServerLog.StopCloseFailed(logger, connection.Id, exception);
                connection.Abort();
            }
        });

        TimeSpan shutdownTimeout = _running?.ShutdownTimeout ?? TimeSpan.Zero;
        try
        {
            await allClosed.WaitAsync(shutdownTimeout, clock, cancellationToken).ConfigureAwait(false);
        }
        catch (Exception exception) when (exception is TimeoutException or OperationCanceledException)
        {
            ServerConnection[] remaining = _connections.Snapshot();

            ServerLog.AbortingConnections(_logger, remaining.Length);
            foreach (ServerConnection connection in remaining)
            {
                connection.Abort();
            }

            // An aborted connection ends when its handler returns; one that never does keeps its connection
            // object and pool blocks, and is not waited for beyond the grace.
            try
            {
                await allClosed.WaitAsync(AbortGrace, clock, CancellationToken.None).ConfigureAwait(false);
            }
            catch (TimeoutException)
            {
                ServerLog.HandlersStillRunning(_logger, ConnectionCount);
            }
        }

        _heartbeat?.Dispose();
        foreach (IConnectionListener listener in _listeners)
        {
            await listener.DisposeAsync().ConfigureAwait(false);
        }

        if (_ownedTransport is not null)
        {
            await _ownedTransport.DisposeAsync().ConfigureAwait(false);
        }

        if (_holdsBatchPolicy)
        {
            _holdsBatchPolicy = false;
            BatchPolicy.Exit();
        }

        if (_settings is not null)
        {
            // Acquired right after the settings were made, in StartAsync.
            DateHeaderValues.Release();
        }

        ServerLog.Stopped(_logger);
    }

    /// <summary>
    /// The first step of a stop, once <see cref="StopAsync"/> turned the server unready (<see cref="IsReady"/>,
    /// <see cref="FalconetServerOptions.Draining"/>): goes on serving as usual for <see cref="FalconetServerOptions.DrainDelay"/>, so that load balancers stop sending before any
    /// connection is closed. The token ends the delay early.
    /// </summary>
    private async Task DrainAsync(TimeProvider clock, CancellationToken cancellationToken)
    {
        TimeSpan delay = _running?.DrainDelay ?? TimeSpan.Zero;
        ServerLog.Draining(_logger, delay.TotalSeconds);

        if (delay > TimeSpan.Zero && _started)
        {
            try
            {
                await Task.Delay(delay, clock, cancellationToken).ConfigureAwait(false);
            }
            catch (OperationCanceledException)
            {
                // Asked to stop sooner: the drain goes on at once.
            }
        }
    }

    private void OnHeartbeat(long now)
    {
        _connections.ForEach(now, static (connection, now) => connection.OnHeartbeat(now));
        if (_holdsBatchPolicy)
        {
            BatchPolicy.Refresh();
        }

        if (_idleMemory?.OnTick(now, RequestCount) is int released and > 0)
        {
            ServerLog.ReleasedIdleSlabs(_logger, released, (long)released * SlabMemoryPool.SlabSize);
        }
    }

    private void OnConnectionClosed(ServerConnection connection)
    {
        long peak = connection.PeakBufferedOutput;
        long current = Interlocked.Read(ref _peakConnectionOutput);
        while (peak > current)
        {
            long seen = Interlocked.CompareExchange(ref _peakConnectionOutput, peak, current);
            if (seen == current)
            {
                break;
            }

            current = seen;
        }

        _connections.Remove(connection, connection.RequestCount);
    }
}
