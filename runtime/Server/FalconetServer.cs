using System;
using System.Collections.Generic;
using System.IO;
using System.Net;
using System.Threading;
using System.Threading.Tasks;
using Falconet.Buffers;
using Falconet.Http;
using Falconet.Http.Http1;
using Falconet.Timekeeping;
using Falconet.Transport;
using Falconet.Transport.Tls;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Logging.Abstractions;

namespace Falconet.Server;

/// <summary>
/// An HTTP/1.1 server: listens on the configured endpoints, runs one <see cref="HttpConnection"/> per accepted
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
    private ConnectionRegistry<HttpConnection> _connections = new();
    private readonly List<IConnectionListener> _listeners = new();
    private readonly List<Task> _acceptLoops = new();
    private readonly List<IPEndPoint> _boundEndpoints = new();
    private readonly List<IPEndPoint> _boundHttpsEndpoints = new();
    private readonly Lock _gate = new();
    private FalconetServerOptions? _running;
    private ITransportFactory? _transport;
    private IAsyncDisposable? _ownedTransport;
    private HttpConnectionSettings? _settings;
    private Heartbeat? _heartbeat;
    private IdleMemory? _idleMemory;
    private Task? _stopTask;
    private long _peakConnectionOutput;
    private long _refusedConnections;
    private long _refusedByTransportBefore;
    private int _state;

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

    /// <summary>The endpoints actually bound (port 0 resolved), in the order of <see cref="FalconetServerOptions.Endpoints"/>.</summary>
    public IReadOnlyList<IPEndPoint> BoundEndpoints => _boundEndpoints;

    /// <summary>The HTTPS endpoints actually bound (port 0 resolved), in the order of <see cref="FalconetServerOptions.HttpsEndpoints"/>.</summary>
    public IReadOnlyList<IPEndPoint> BoundHttpsEndpoints => _boundHttpsEndpoints;

    /// <summary>Requests started since the server started.</summary>
    public long RequestCount => _settings is null ? 0 : Interlocked.Read(ref _settings.RequestsStarted);

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
        };
        DateHeaderValues.Acquire();
        try
        {
            // Derived before the transport opens its own descriptors; the reserve covers those.
            _connections = new ConnectionRegistry<HttpConnection>(options.MaxConnections ?? DescriptorLimit.DefaultMaxConnections());
            ServerLog.ConnectionLimit(_logger, _connections.Limit, DescriptorLimit.SoftLimit() ?? -1);
            _transport = options.TransportFactory ?? BuiltInTransports.Create(
                options.Transport ?? BuiltInTransports.ChooseDefault(BuiltInTransports.LibuvAvailable, _logger), options, _connections.Limit);
            if (options.TransportFactory is null)
            {
                _ownedTransport = _transport as IAsyncDisposable;
            }

            _refusedByTransportBefore = _transport.RefusedConnections;

            // Loads what renting a block needs while descriptors are plentiful: an assembly that fails to load when the
            // process is out of them stays failed for its whole life, and no connection could rent again.
            foreach (SlabMemoryPool pool in _transport.Pools)
            {
                pool.Return(pool.Rent());
            }

            foreach (IPEndPoint endpoint in options.Endpoints)
            {
                IConnectionListener listener = await BindAsync(_transport, endpoint, "http", cancellationToken).ConfigureAwait(false);
                _listeners.Add(listener);
                _boundEndpoints.Add((IPEndPoint)listener.EndPoint);
                ServerLog.Listening(_logger, listener.EndPoint);
            }

            // An HTTPS endpoint is a listener of the TLS decorator over the same transport; its handshakes take places of
            // the connection limit, and the listener hands out only connections whose handshake completed.
            var tlsContext = new TlsListenerContext(options.TimeProvider, options.HeartbeatInterval, _logger, new Admission(this));
            foreach (HttpsEndpoint https in options.HttpsEndpoints)
            {
                var tls = new TlsTransportFactory(_transport, https.Tls, tlsContext);
                IConnectionListener listener = await BindAsync(tls, https.EndPoint, "https", cancellationToken).ConfigureAwait(false);
                _listeners.Add(listener);
                _boundHttpsEndpoints.Add((IPEndPoint)listener.EndPoint);
                TlsLog.ListeningHttps(_logger, listener.EndPoint);
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
    }

    /// <summary>Binds one endpoint; a failure (the port is taken, the address is not the machine's) names the endpoint.</summary>
    private static async ValueTask<IConnectionListener> BindAsync(ITransportFactory transport, IPEndPoint endpoint, string scheme, CancellationToken cancellationToken)
    {
        try
        {
            return await transport.BindAsync(endpoint, cancellationToken).ConfigureAwait(false);
        }
        catch (Exception exception) when (exception is System.Net.Sockets.SocketException or IOException)
        {
            throw new IOException($"Falconet cannot bind {scheme}://{endpoint}: {exception.Message}", exception);
        }
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

            _stopTask ??= Task.Run(() => StopCoreAsync(cancellationToken), CancellationToken.None);
            return _stopTask;
        }
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
        Volatile.Write(ref _state, 2);
        ServerLog.Stopping(_logger);
        foreach (IConnectionListener listener in _listeners)
        {
            await listener.UnbindAsync().ConfigureAwait(false);
        }

        // Unbound listeners hand out nothing more (a TLS listener has closed the handshakes it held): once the accept
        // loops end, every connection the server will ever run is registered.
        await Task.WhenAll(_acceptLoops).ConfigureAwait(false);

        Task allClosed = _connections.WhenEmptyAsync();

        // Cancelled before idle connections are looked at: a connection about to wait reads it after publishing
        // that it waits, so each one either closes by itself or is closed here. Busy ones close after their request.
        _shutdown.Cancel();
        _connections.ForEach(0, static (connection, _) => connection.CloseIfIdle());

        TimeProvider clock = _running?.TimeProvider ?? TimeProvider.System;
        TimeSpan shutdownTimeout = _running?.ShutdownTimeout ?? TimeSpan.Zero;
        try
        {
            await allClosed.WaitAsync(shutdownTimeout, clock, cancellationToken).ConfigureAwait(false);
        }
        catch (Exception exception) when (exception is TimeoutException or OperationCanceledException)
        {
            HttpConnection[] remaining = _connections.Snapshot();

            ServerLog.AbortingConnections(_logger, remaining.Length);
            foreach (HttpConnection connection in remaining)
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

        if (_settings is not null)
        {
            // Acquired right after the settings were made, in StartAsync.
            DateHeaderValues.Release();
        }

        ServerLog.Stopped(_logger);
    }

    private void OnHeartbeat(long now)
    {
        _connections.ForEach(now, static (connection, now) => connection.OnHeartbeat(now));
        if (_idleMemory?.OnTick(now, RequestCount) is int released and > 0)
        {
            ServerLog.ReleasedIdleSlabs(_logger, released, (long)released * SlabMemoryPool.SlabSize);
        }
    }

    private void OnConnectionClosed(HttpConnection connection)
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

        _connections.Remove(connection);
    }
}
