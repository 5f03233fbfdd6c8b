using System;
using System.Collections;
using System.Collections.Generic;
using System.Globalization;
using System.IO;
using System.IO.Pipelines;
using System.Net;
using System.Numerics;
using System.Threading;
using System.Threading.Tasks;
using Microsoft.AspNetCore.Hosting.Server.Abstractions;
using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.Http.Features;
using FalconetContext = Falconet.Http.HttpContext;

namespace Falconet.AspNetCore;

/// <summary>
/// The ASP.NET Core features of one Falconet connection, implemented by one object that lives as long as the
/// connection and is reset for every request (as Kestrel does): the feature collection itself, request, response,
/// bodies, connection, lifetime, identifier, body size and body control. It also keeps the host's per-request context
/// (<see cref="IHostContextContainer{TContext}"/>), so the framework reuses its HttpContext across the connection's requests.
/// </summary>
internal sealed partial class ConnectionFeatures<TContext> : IFeatureCollection, IHostContextContainer<TContext>,
    IHttpRequestFeature, IHttpResponseFeature, IHttpResponseBodyFeature, IRequestBodyPipeFeature,
    IHttpRequestBodyDetectionFeature, IHttpConnectionFeature, IHttpRequestLifetimeFeature, IHttpRequestIdentifierFeature,
    IHttpMaxRequestBodySizeFeature, IHttpBodyControlFeature, IConnectionFeatures
    where TContext : notnull
{
    private readonly FalconetContext _context;
    private readonly FalconetWebServerSettings _settings;
    private readonly RequestHeaderDictionary _defaultRequestHeaders;
    private readonly ResponseHeaderDictionary _defaultResponseHeaders;
    private readonly AspNetRequestBodyStream _defaultRequestBody;
    private readonly AspNetResponseBodyStream _defaultResponseBody;
    private readonly AspNetRequestBodyPipeReader _defaultRequestPipe;
    private readonly AspNetResponseBodyPipeWriter _defaultResponsePipe;
    private readonly List<KeyValuePair<Func<object, Task>, object>> _onStarting = new();
    private readonly List<KeyValuePair<Func<object, Task>, object>> _onCompleted = new();
    private readonly RequestTarget _target = new();
    private string? _connectionId;
    private int _revision;
    private bool _started;

    // Per request: what the application replaced. Null means "from the Falconet request".
    private string? _protocol;
    private string? _scheme;
    private string? _method;
    private string? _pathBase;
    private string? _path;
    private string? _queryString;
    private string? _rawTarget;
    private string? _reasonPhrase;
    private string? _traceIdentifier;
    private CancellationToken? _requestAborted;
    private long? _maxRequestBodySize;

    public ConnectionFeatures(FalconetContext context, FalconetWebServerSettings settings)
    {
        _context = context;
        _settings = settings;
        _defaultRequestHeaders = new RequestHeaderDictionary(context.Request.Headers);
        _defaultResponseHeaders = new ResponseHeaderDictionary(context.Response.Headers, () => HasStarted);
        _defaultRequestBody = new AspNetRequestBodyStream(this);
        _defaultResponseBody = new AspNetResponseBodyStream(this);
        _defaultRequestPipe = new AspNetRequestBodyPipeReader(_defaultRequestBody);
        _defaultResponsePipe = new AspNetResponseBodyPipeWriter(this);
        ResetFeatures();
    }

    /// <summary>The Falconet context this connection runs on.</summary>
    public FalconetContext Context => _context;

    /// <inheritdoc/>
    public TContext? HostContext { get; set; }

    /// <summary>True when the application registered callbacks that must run once the response is sent.</summary>
    public bool HasOnCompleted => _onCompleted.Count != 0;

    /// <summary>
    /// True when reading the request body failed on the client's side (malformed chunked framing, a forbidden trailer, a body
    /// cut short or too slow): the connection cannot continue, and Falconet answers the request itself when the application
    /// has not started a response, whatever the application made of the exception.
    /// </summary>
    public bool RequestBodyFaulted => _defaultRequestBody.Faulted;

    /// <summary>Prepares the object for the next request of the connection.</summary>
    public void Reset()
    {
        _started = false;
        _protocol = null;
        _scheme = null;
        _method = null;
        _pathBase = null;
        _path = null;
        _queryString = null;
        _rawTarget = null;
        _reasonPhrase = null;
        _traceIdentifier = null;
        _requestAborted = null;
        _maxRequestBodySize = null;
        _onStarting.Clear();
        _onCompleted.Clear();
        _routeValues = null;
        ResetTls();
        _defaultRequestBody.Reset();
        _defaultRequestPipe.Reset();
        _defaultResponsePipe.Reset();
        AllowSynchronousIO = _settings.AllowSynchronousIO;

        // A middleware may have changed the addresses for the previous request (ForwardedHeadersMiddleware sets the client's):
        // as on Kestrel, every request starts from the connection's own.
        InitializeConnection();
        ResetFeatures();
    }

    // IHttpRequestFeature

    public string Protocol
    {
        get => _protocol ?? _context.Request.Protocol;
        set => _protocol = value;
    }

    public string Scheme
    {
        get => _scheme ?? (_tls is null ? "http" : "https");
        set => _scheme = value;
    }

    public string Method
    {
        get => _method ?? _context.Request.MethodName;
        set => _method = value;
    }

    public string PathBase
    {
        get => _pathBase ?? string.Empty;
        set => _pathBase = value;
    }

    public string Path
    {
        get => _path ??= _target.DecodePath(_context.Request);
        set => _path = value;
    }

    public string QueryString
    {
        get => _queryString ??= _target.QueryString(_context.Request);
        set => _queryString = value;
    }

    public string RawTarget
    {
        get => _rawTarget ??= _target.RawTarget(_context.Request);
        set => _rawTarget = value;
    }

    public IHeaderDictionary Headers { get; set; } = null!;

    public Stream Body { get; set; } = null!;

    IHeaderDictionary IHttpResponseFeature.Headers
    {
        get => ResponseHeaders;
        set => ResponseHeaders = value;
    }

    Stream IHttpResponseFeature.Body
    {
        get => ResponseBody;
        set => ResponseBody = value;
    }

    private IHeaderDictionary ResponseHeaders { get; set; } = null!;

    private Stream ResponseBody { get; set; } = null!;

    // IHttpResponseFeature

    public int StatusCode
    {
        get => _context.Response.StatusCode;
        set
        {
            if (HasStarted)
            {
                throw new InvalidOperationException("StatusCode cannot be set because the response has already started.");
            }

            _context.Response.StatusCode = value;
        }
    }

    public string? ReasonPhrase
    {
        get => _reasonPhrase;
        set
        {
            if (HasStarted)
            {
                throw new InvalidOperationException("ReasonPhrase cannot be set because the response has already started.");
            }

            _reasonPhrase = value;
        }
    }

    public bool HasStarted => _started || _context.Response.HasStarted;

    public void OnStarting(Func<object, Task> callback, object state)
    {
        if (HasStarted)
        {
            throw new InvalidOperationException("OnStarting cannot be set because the response has already started.");
        }

        _onStarting.Add(new KeyValuePair<Func<object, Task>, object>(callback, state));
    }

    public void OnCompleted(Func<object, Task> callback, object state)
        => _onCompleted.Add(new KeyValuePair<Func<object, Task>, object>(callback, state));

    // IHttpResponseBodyFeature

    Stream IHttpResponseBodyFeature.Stream => _defaultResponseBody;

    PipeWriter IHttpResponseBodyFeature.Writer => _defaultResponsePipe;

    void IHttpResponseBodyFeature.DisableBuffering()
    {
        // Falconet buffers only up to the write-behind bound and sends at every flush: nothing to turn off.
    }

    Task IHttpResponseBodyFeature.StartAsync(CancellationToken cancellationToken)
    {
        ValueTask start = StartAsync();
        return start.IsCompletedSuccessfully ? Task.CompletedTask : start.AsTask();
    }

    Task IHttpResponseBodyFeature.SendFileAsync(string path, long offset, long? count, CancellationToken cancellationToken)
        => SendFileFallback.SendFileAsync(_defaultResponseBody, path, offset, count, cancellationToken);

    Task IHttpResponseBodyFeature.CompleteAsync() => CompleteAsync().AsTask();

    // IRequestBodyPipeFeature

    public PipeReader Reader => _defaultRequestPipe;

    // IHttpRequestBodyDetectionFeature

    public bool CanHaveBody => _context.Request.HasBody;

    // IHttpConnectionFeature

    public string ConnectionId
    {
        get => _connectionId ??= _context.ConnectionId.ToString(CultureInfo.InvariantCulture);
        set => _connectionId = value;
    }

    public IPAddress? RemoteIpAddress { get; set; }

    public int RemotePort { get; set; }

    public IPAddress? LocalIpAddress { get; set; }

    public int LocalPort { get; set; }

    // IHttpRequestLifetimeFeature

    public CancellationToken RequestAborted
    {
        get => _requestAborted ?? _context.RequestAborted;
        set => _requestAborted = value;
    }

    public void Abort() => _context.Abort();

    // IHttpRequestIdentifierFeature

    public string TraceIdentifier
    {
        get => _traceIdentifier ??= CreateTraceIdentifier(ConnectionId, _context.RequestNumber);
        set => _traceIdentifier = value;
    }

    // IHttpMaxRequestBodySizeFeature

    public bool IsReadOnly => _defaultRequestBody.HasStartedReading;

    public long? MaxRequestBodySize
    {
        get => _maxRequestBodySize ?? _settings.MaxRequestBodySize;
        set
        {
            if (IsReadOnly)
            {
                throw new InvalidOperationException("The maximum request body size cannot be changed after the request body has started to be read.");
            }

            ArgumentOutOfRangeException.ThrowIfNegative(value.GetValueOrDefault(), nameof(value));
            _maxRequestBodySize = value;
        }
    }

    /// <summary>The body limit in force: the server's (checked before the application runs) or a lower one the application set.</summary>
    public long EffectiveMaxRequestBodySize => Math.Min(_settings.MaxRequestBodySize, _maxRequestBodySize ?? long.MaxValue);

    // IHttpBodyControlFeature

    public bool AllowSynchronousIO
    {
        get => _context.Response.AllowSynchronousWrites;
        set => _context.Response.AllowSynchronousWrites = value;
    }

    /// <summary>
    /// "{connection id}:{request number}", the number in upper-case hex of at least eight digits, as Kestrel forms it; built
    /// in place (an interpolated "X8" took the slow path of number formatting and a pooled buffer on every request).
    /// </summary>
    internal static string CreateTraceIdentifier(string connectionId, long requestNumber)
    {
        int digits = Math.Max(8, (64 - BitOperations.LeadingZeroCount((ulong)requestNumber) + 3) / 4);
        return string.Create(connectionId.Length + 1 + digits, (connectionId, requestNumber), static (span, state) =>
        {
            state.connectionId.CopyTo(span);
            span[state.connectionId.Length] = ':';
            ulong value = (ulong)state.requestNumber;
            for (int i = span.Length - 1; i > state.connectionId.Length; i--)
            {
                span[i] = "0123456789ABCDEF"[(int)(value & 0xF)];
                value >>= 4;
            }
        });
    }

    /// <summary>Fills the connection feature's addresses from the Falconet context (once per connection).</summary>
    public void InitializeConnection()
    {
        InitializeTls();
        ResetFeatures();
        if (_context.RemoteEndPoint is IPEndPoint remote)
        {
            RemoteIpAddress = remote.Address;
            RemotePort = remote.Port;
        }

        if (_context.LocalEndPoint is IPEndPoint local)
        {
            LocalIpAddress = local.Address;
            LocalPort = local.Port;
        }
    }

    /// <summary>
    /// Starts the response the ASP.NET Core way: runs the OnStarting callbacks (last registered first) and from then on
    /// the status and headers are read-only. Falconet itself still buffers the body, so a response that completes
    /// within the write-behind bound still gets a Content-Length.
    /// </summary>
    public ValueTask StartAsync()
    {
        if (_started)
        {
            return default;
        }

        // Callbacks may register more callbacks; each runs once. Those that complete at once cost no state machine.
        while (_onStarting.Count != 0)
        {
            Task callback;
            try
            {
                callback = RunLastOnStarting();
            }
            catch (Exception exception)
            {
                return ValueTask.FromException(exception);
            }

            if (!callback.IsCompletedSuccessfully)
            {
                return FinishOnStartingAsync(callback);
            }
        }

        _started = true;
        return default;
    }

    /// <summary>Starts the response from a synchronous write: OnStarting callbacks that do not complete at once are waited for.</summary>
    public void StartSynchronously()
    {
        ValueTask start = StartAsync();
        if (!start.IsCompletedSuccessfully)
        {
            start.AsTask().GetAwaiter().GetResult();
        }
    }

    /// <summary>Starts the response (OnStarting), completes it and sends it, so the OnCompleted callbacks may run after.</summary>
    public async ValueTask CompleteAsync()
    {
        if (_context.Response.HasCompleted)
        {
            return;
        }

        await StartAsync().ConfigureAwait(false);
        await _context.Response.CompleteAsync().ConfigureAwait(false);
    }

    /// <summary>Runs the OnCompleted callbacks, last registered first; failures are logged and do not stop the others.</summary>
    public async ValueTask FireOnCompletedAsync()
    {
        for (int i = _onCompleted.Count - 1; i >= 0; i--)
        {
            KeyValuePair<Func<object, Task>, object> entry = _onCompleted[i];
            try
            {
                await entry.Key(entry.Value).ConfigureAwait(false);
            }
            catch (Exception exception)
            {
                AspNetCoreLog.OnCompletedFailed(_settings.Logger, ConnectionId, TraceIdentifier, exception);
            }
        }

        _onCompleted.Clear();
    }

    private Task RunLastOnStarting()
    {
        int last = _onStarting.Count - 1;
        KeyValuePair<Func<object, Task>, object> entry = _onStarting[last];
        _onStarting.RemoveAt(last);
        return entry.Key(entry.Value);
    }

    private async ValueTask FinishOnStartingAsync(Task pending)
    {
        await pending.ConfigureAwait(false);
        while (_onStarting.Count != 0)
        {
            await RunLastOnStarting().ConfigureAwait(false);
        }

        _started = true;
    }
}
