using System;
using System.Buffers;
using System.Net;
using System.Runtime.CompilerServices;
using System.Threading;
using System.Threading.Tasks;
using Falconet.Diagnostics;
using Falconet.Transport;

namespace Falconet.Http.Http1;

/// <summary>
/// Runs HTTP/1.1 on one transport connection: parses every complete request of what has been received
/// (pipelining), runs the application, writes each response into output blocks and sends the whole batch
/// with one gathered call. Every object here lives as long as the connection and is reused per request.
/// </summary>
/// <remarks>
/// The server starts a connection with <see cref="TransportConnection.Schedule"/> (on the thread pool, or on the
/// connection's I/O or loop thread where the transport has one), never on the accept loop. After that the loop
/// continues wherever its awaited receive or send completes: on its libuv loop thread (libuv's default, inline
/// scheduling), on the thread that completed it (the sockets default, thread-pool scheduling), or on its own thread with the
/// sockets transport's I/O threads. Deadlines (<see cref="ConnectionDeadline"/>): while waiting for the first
/// byte of a request the keep-alive deadline runs, from the first byte to the end of the header section the
/// request-headers deadline; the server's heartbeat expires a passed one (<see cref="OnHeartbeat"/>) and stops the
/// receive, and this loop then closes quietly, or answers 408 when part of a request has arrived. This file holds the loop;
/// the partial files beside it hold its other jobs: HttpConnection.Closing.cs (aborts and the lingering close),
/// HttpConnection.Deadlines.cs (the heartbeat's side and the 408) and HttpConnection.Errors.cs (answers to failed requests
/// and the reporting of rejections).
/// </remarks>
internal sealed partial class HttpConnection : ServerConnection, IHttpContextOwner
{
    private readonly TransportConnection _transport;

    // The execution context its requests start from, put back after every call to the application (HandlerExecutionContext).
    private readonly ExecutionContext? _executionContext;
    private readonly HttpConnectionSettings _settings;
    private readonly Http1Input _input;
    private readonly Http1OutputBuffer _output;
    private readonly RequestHeaders _requestHeaders;
    private readonly HttpRequest _request;
    private readonly HttpResponse _response;
    private readonly RequestBodyReader _body;
    private readonly HttpContext _context;
    private readonly IoThreadReturn _ioThread;
    private readonly RequestAbortSignal _abortSignal = new();
    private ConnectionMeasurement _metrics;
    private readonly ConnectionDeadline _deadline = new();
    private readonly DataRateMonitor _rates;
    private volatile Http1ConnectionStatus _status;
    private int _signals;
    private HeaderParseState _headerState;
    private bool _requestKeepAlive;
    private ConnectionCloseReason _closeReason;
    private int _emptyLineBytes;
    private long _requestCount;

    // The handler's ValueTask while the loop awaits it (see ProcessRequestsAsync); default otherwise.
    private ValueTask _pendingHandling;

    // The managed id of the thread the loop runs on since its last await, or 0 when not read yet.
    private int _loopThread;

    private readonly bool _http2PriorKnowledge;
    private Http2.Http2Connection? _http2;

    /// <summary>
    /// <paramref name="http2PriorKnowledge"/>: the endpoint also serves HTTP/2, so a client that opens with the HTTP/2
    /// connection preface is handed over to an <see cref="Http2.Http2Connection"/> on the same transport (plain HTTP only:
    /// over TLS the protocol is chosen with ALPN).
    /// </summary>
    public HttpConnection(TransportConnection transport, HttpConnectionSettings settings, bool http2PriorKnowledge = false)
    {
        _executionContext = HandlerExecutionContext.Capture();
        _http2PriorKnowledge = http2PriorKnowledge;
        _transport = transport;
        _settings = settings;
        _input = new Http1Input(transport, _abortSignal);
        _rates = new DataRateMonitor(settings.TimeProvider, settings.MinRequestBodyDataRate, settings.MinResponseDataRate);
        _output = new Http1OutputBuffer(transport, settings.OutputBufferLimit, _rates);
        HeaderSetBinding headerSet = settings.HeaderSet;
        _requestHeaders = headerSet.CreateRequestHeaders();
        _body = new RequestBodyReader(_input, _output, transport.Pool, settings.Limits, _rates);
        _request = headerSet.CreateRequest(_requestHeaders, _body);
        _response = headerSet.CreateResponse(_output, transport.Pool);
        _response.Shutdown = settings.Shutdown;
        _body.Attach(_response);
        _context = headerSet.CreateContext(this, _request, _response);
        _request.IsHttps = transport.TlsInfo is not null;
        if (settings.ForwardedHeaders is { } forwarded)
        {
            _request.Forwarded = new ForwardedResolver(forwarded, transport, _request);
        }

        _ioThread = new IoThreadReturn(transport);
    }

    /// <summary>Requests started on this connection; other threads may read it (the server sums it over its connections).</summary>
    public override long RequestCount => Volatile.Read(ref _requestCount) + (Volatile.Read(ref _http2)?.RequestCount ?? 0);

    public override TransportConnection Transport => _transport;

    /// <summary>Marks a connection the accept loop counted as queued (<see cref="ServerMetrics.QueuedConnectionsName"/>).</summary>
    public override void SetQueued(bool queued) => _metrics.SetQueued(queued);

    long IHttpContextOwner.ConnectionId => Id;

    long IHttpContextOwner.RequestNumber => RequestCount;

    int IHttpContextOwner.StreamId => 0;

    void IHttpContextOwner.Abort() => RequestAbort();

    void IHttpContextOwner.Reset(int errorCode) => RequestAbort();

    public EndPoint? LocalEndPoint => _transport.LocalEndPoint;

    public EndPoint? RemoteEndPoint => _transport.RemoteEndPoint;

    /// <summary>The most output bytes this connection buffered at once (write-behind diagnostics).</summary>
    public override long PeakBufferedOutput => Math.Max(_output.PeakBuffered, Volatile.Read(ref _http2)?.PeakBufferedOutput ?? 0);

    /// <summary>Cancelled when the client goes away or the request is aborted (see <see cref="HttpContext.RequestAborted"/>).</summary>
    public CancellationToken RequestAborted => _abortSignal.Token;

    /// <summary>Runs the connection until the peer closes, a request asks to close, a deadline passes, or the server stops.</summary>
    public override async Task RunAsync()
    {
        _metrics.ConnectionStarted(_transport.LocalEndPoint);
        try
        {
            await ProcessRequestsAsync().ConfigureAwait(false);
            if (_http2 is { } http2)
            {
                await http2.ServeAsync(_input.GetSequence()).ConfigureAwait(false);
                if (http2.AbortRequested)
                {
                    Signal(Http1ConnectionSignals.AbortRequested);
                }
            }

            // After a stop, a receive's 0 is not the peer's close: the client may still be sending.
            if (_status == Http1ConnectionStatus.ClosingAfterResponse && !Signaled(Http1ConnectionSignals.AbortRequested)
                && (!_input.PeerClosed || Signaled(Http1ConnectionSignals.ReceiveStopped)))
            {
                await LingerAsync().ConfigureAwait(false);
            }
        }
        catch (Exception exception)
        {
            Signal(Http1ConnectionSignals.AbortRequested);
            HttpLog.ConnectionError(_settings.Logger, Id, exception);
        }

        if (_rates.Violation != ConnectionCloseReason.None)
        {
            _closeReason = _rates.Violation;
        }

        if (_closeReason != ConnectionCloseReason.None)
        {
            HttpLog.ClosedByServer(_settings.Logger, Id, ConnectionCloseReasons.Name(_closeReason));
            ServerMetrics.Count(ServerMetrics.ClosedConnections, ConnectionCloseReasons.Name(_closeReason));
        }

        // Close first and wait until no receive or send is pending: an operation still in flight (a body read
        // the handler started and abandoned) may be writing into an input block until then.
        if (Signaled(Http1ConnectionSignals.AbortRequested))
        {
            _transport.Abort();
        }

        try
        {
            await _transport.DisposeAsync().ConfigureAwait(false);
            await _input.AbandonWatchAsync().ConfigureAwait(false);
            await DisposeConnectionStateAsync().ConfigureAwait(false);
        }
        catch (Exception exception)
        {
            HttpLog.ConnectionError(_settings.Logger, Id, exception);
        }
        finally
        {
            if (_http2 is { } http2)
            {
                await http2.ReleaseAsync().ConfigureAwait(false);
            }

            _input.Dispose();
            _output.Dispose();
            _response.ReleaseBuffers();
            _metrics.ConnectionEnded(_transport.LocalEndPoint);
            _settings.ConnectionClosed?.Invoke(this);
        }
    }

    private async Task ProcessRequestsAsync()
    {
        CancellationToken shutdown = _settings.Shutdown;
        while (true)
        {
            // Write-behind between pipelined requests too: answers held back for one gathered send must not pile
            // up past the bound while a client pipelines requests without reading.
            if (_output.IsOverLimit)
            {
                await _output.FlushAsync().ConfigureAwait(false);
                _loopThread = 0;
            }

            bool parsed;
            try
            {
                parsed = TryParseRequestHead();
            }
            catch (BadHttpRequestException exception)
            {
                if (_http2PriorKnowledge && RequestCount == 0 && Http2.Http2Preface.IsPrefixOf(_input.GetSequence()))
                {
                    // RFC 9113 section 3.3: a client with prior knowledge opens with the HTTP/2 preface, whose first line reads
                    // as a request line of version 2.0. Found only where HTTP/1.1 refuses it, so HTTP/1.1 pays nothing for it.
                    // The HTTP/2 connection keeps its own deadlines from here.
                    _status = Http1ConnectionStatus.HandlingRequest;
                    _deadline.TrySet(ConnectionDeadline.None);
                    Volatile.Write(ref _http2, new Http2.Http2Connection(_transport, _settings, this));
                    return;
                }

                ReportRejection(exception);
                _response.Reset(isHead: false, http10: false, keepAlive: false);
                _response.TryWriteEmptyResponse(exception.StatusCode, keepAlive: false);
                await _output.FlushAsync().ConfigureAwait(false);

                // The client may still be sending the rest of what it meant as a request.
                CloseAfterResponse(ConnectionCloseReason.BadRequest);
                return;
            }

            if (parsed)
            {
                _status = Http1ConnectionStatus.HandlingRequest;
                if (!_deadline.TrySet(ConnectionDeadline.None) && _deadline.HasPassed(_settings.TimeProvider.GetTimestamp()))
                {
                    // The head completed as its deadline passed; receiving has already stopped. (A deadline a stopping
                    // server expired early is no timeout: the request is answered, and the connection closes after it.)
                    await RespondRequestTimeoutAsync().ConfigureAwait(false);
                    return;
                }

                // The request runs inside this method so that a handler completing synchronously costs no
                // state machine; an asynchronous one reuses this method's box for the whole connection.
                bool keepAlive = false;
                Exception? failure = null;
                _metrics.RequestStarted(_request);
                bool accepted = BeginRequest();
                if (accepted)
                {
                    try
                    {
                        // The loop's thread, read once per stretch of synchronous work (it is forgotten after every await).
                        int thread = _loopThread;
                        if (thread == 0)
                        {
                            thread = _loopThread = Environment.CurrentManagedThreadId;
                        }

                        _output.BeginHandlerCall(thread);
                        ValueTask handling = _settings.Application.Handle(_context);
                        HandlerExecutionContext.Restore(_executionContext);
                        _output.EndHandlerCall();
                        if (handling.IsCompleted)
                        {
                            handling.GetAwaiter().GetResult();
                        }
                        else
                        {
                            // Kept in a field while it waits: a local that lived across the await below would be a field
                            // of the state machine, stored (with a write barrier) and cleared on every synchronous request.
                            _pendingHandling = handling;

                            // While the handler waits, a receive notices a client that goes away (RequestAborted).
                            _input.WatchForDisconnect();

                            // What it flushed before going asynchronous was held for the batch: the client gets it now.
                            if (_output.TakeOverHeldBytes() is { } takenOver)
                            {
                                await WaitForTakeOverAsync(takenOver).ConfigureAwait(false);
                                _loopThread = 0;
                            }

                            await TakePendingHandling().ConfigureAwait(false);
                            _loopThread = 0;

                            // The handler finished elsewhere (a timer, the thread pool): the response is completed and
                            // sent from the connection's I/O thread, where its pool is used on the owner path.
                            if (!_transport.IsOnIoThread)
                            {
                                await _ioThread.Return();
                                _loopThread = 0;
                            }
                        }
                    }
                    catch (Exception exception)
                    {
                        // A handler that threw may have changed the context before it did.
                        HandlerExecutionContext.Restore(_executionContext);
                        _output.EndHandlerCall();
                        failure = exception;
                    }

                    keepAlive = EndRequest(failure);
                    _abortSignal.EndRequest();
                    if (keepAlive && !_body.IsCompleted)
                    {
                        // Send the response before waiting for body bytes that nobody will read.
                        await _output.FlushAsync().ConfigureAwait(false);
                        _loopThread = 0;
                        keepAlive = await _body.DrainAsync(_settings.MaxRequestBodyDrainSize, CancellationToken.None).ConfigureAwait(false);
                        _loopThread = 0;
                        if (_body.Fault is { } fault)
                        {
                            // The body the application left unread was malformed: the connection closes for it.
                            ReportRejection(fault);
                        }
                    }
                }

                _metrics.RequestEnded(_request, _response.StatusCode, failure);
                if (Signaled(Http1ConnectionSignals.AbortRequested))
                {
                    return;
                }

                if (!keepAlive)
                {
                    await _output.FlushAsync().ConfigureAwait(false);
                    CloseAfterResponse(_closeReason != ConnectionCloseReason.None ? _closeReason : ReasonToClose());
                    return;
                }

                _status = Http1ConnectionStatus.RequestNotStarted;
                continue;
            }

            // Every complete request of this read is answered: send the batch in one call.
            await _output.FlushAsync().ConfigureAwait(false);
            _loopThread = 0;

            // A connection waiting for the client holds only the block it receives into.
            ReleaseIdleBlocks();

            if (_status == Http1ConnectionStatus.RequestNotStarted && _input.Buffered == 0)
            {
                // Idle. The clock starts once the responses are sent, so a slow reader is not idle. The status and the
                // deadline are published before the shutdown signal is read (see CloseIfIdle): once per batch, not per request.
                _status = Http1ConnectionStatus.WaitingForRequest;
                bool armed = _deadline.TrySet(_settings.DeadlineAfter(_settings.KeepAliveTimeout));
                Interlocked.MemoryBarrier();
                if (armed && shutdown.IsCancellationRequested && _settings.DrainIdleTimeout > 0)
                {
                    // Stopping: a connection that has not sent its first request yet gets the drain's grace too.
                    armed = _deadline.TryBringForward(_settings.DeadlineAfter(_settings.DrainIdleTimeout));
                }
                else if (!armed || shutdown.IsCancellationRequested)
                {
                    _closeReason = shutdown.IsCancellationRequested ? ConnectionCloseReason.ServerStopping : ConnectionCloseReason.KeepAliveTimeout;
                    return;
                }
            }
            else if (_deadline.IsExpired)
            {
                // Part of a head is here and its deadline could not be armed, or passed meanwhile.
                await EndHeadAfterExpiryAsync().ConfigureAwait(false);
                return;
            }

            int received;
            while (!_input.TryEndReceive(await _input.BeginReceive(CancellationToken.None).ConfigureAwait(false), out received))
            {
                // A wait for data ended: the receive after it normally completes at once.
            }

            _loopThread = 0;
            if (_status == Http1ConnectionStatus.WaitingForRequest)
            {
                _status = Http1ConnectionStatus.RequestNotStarted;
            }

            if (received == 0)
            {
                // Expired: the heartbeat (or a stopping server) stopped the receive. Otherwise the peer closed its side.
                if (_deadline.IsExpired)
                {
                    if (_status != Http1ConnectionStatus.RequestNotStarted || _input.Buffered != 0)
                    {
                        await EndHeadAfterExpiryAsync().ConfigureAwait(false);
                    }
                    else
                    {
                        _closeReason = shutdown.IsCancellationRequested ? ConnectionCloseReason.ServerStopping : ConnectionCloseReason.KeepAliveTimeout;
                    }
                }

                return;
            }
        }
    }

    /// <summary>The handler call that did not complete synchronously, handed to its await (and forgotten here).</summary>
    private ValueTask TakePendingHandling()
    {
        ValueTask pending = _pendingHandling;
        _pendingHandling = default;
        return pending;
    }

    /// <summary>
    /// Waits for the send of the bytes a handler held before going asynchronous. A failure is not the handler's: its next
    /// flush, or the connection's, fails with it.
    /// </summary>
    private static async ValueTask WaitForTakeOverAsync(Task takenOver)
    {
        try
        {
            await takenOver.ConfigureAwait(false);
        }
        catch (Exception)
        {
            // Seen again by the next flush (see Http1OutputBuffer.TakeOverHeldBytes).
        }
    }

    /// <summary>Returns the empty output and staged-body blocks to the pool while the connection only receives.</summary>
    private void ReleaseIdleBlocks()
    {
        _output.ReleaseIdleBlock();
        _response.ReleaseIdleBlock();
    }

    /// <summary>
    /// Consumes input that is nothing but empty lines (a CRLF a client sent after a body, RFC 9112 section 2.2), so the
    /// connection counts as idle again (keep-alive timeout, not the request-headers one, and closable on shutdown).
    /// They still count toward the request-line limit until a request line arrives; past it, 400.
    /// </summary>
    private void ConsumeLoneEmptyLines(ReadOnlySequence<byte> input, HttpLimits limits)
    {
        if (Http1Parser.IsOnlyEmptyLines(input, limits, _emptyLineBytes, out int length))
        {
            _emptyLineBytes += length;
            _input.Consume(input.End);
        }
    }

    /// <summary>Parses the request line and headers from the buffered input; false when more bytes are needed.</summary>
    private bool TryParseRequestHead()
    {
        if (_input.Buffered == 0)
        {
            return false;
        }

        HeaderSetBinding headerSet = _settings.HeaderSet;
        HttpLimits limits = _settings.Limits;
        Http1ConnectionStatus status = _status;
        if (status != Http1ConnectionStatus.ReceivingHeaders && _emptyLineBytes == 0 && _input.TryGetSingleSpan(out ReadOnlySpan<byte> span)
            && headerSet.TryParseRequestHead(_request, span, limits, out int consumed))
        {
            // The whole head in one block, parsed in one call; anything else (a head not complete yet, across blocks, an
            // uncommon request line) takes the path below from the head's start.
            _input.ConsumeSingle(consumed);
            return true;
        }

        return TryParseRequestHeadFromSequence(headerSet, limits, status);
    }

    /// <summary>
    /// <see cref="TryParseRequestHead"/> for every head the one-call parse does not take, from the head's start (or from its
    /// header section when the request line came in an earlier read).
    /// </summary>
    /// <remarks>Apart, so that the one-call path does not set up this path's locals (a sequence reader) on every request.</remarks>
    [MethodImpl(MethodImplOptions.NoInlining)]
    private bool TryParseRequestHeadFromSequence(HeaderSetBinding headerSet, HttpLimits limits, Http1ConnectionStatus status)
    {
        var reader = new SequenceReader<byte>(_input.GetSequence());
        if (status != Http1ConnectionStatus.ReceivingHeaders)
        {
            if (!headerSet.TryParseRequestLine(_request, ref reader, limits, _emptyLineBytes))
            {
                // Only an incomplete line gets here, never a complete request: the check costs the hot path nothing.
                ConsumeLoneEmptyLines(reader.Sequence, limits);
                if (_input.Buffered != 0)
                {
                    WaitForRestOfHead(Http1ConnectionStatus.ReceivingRequestLine);
                }
                else
                {
                    // Nothing but empty lines: the connection is between requests again (idle, keep-alive deadline).
                    _status = Http1ConnectionStatus.RequestNotStarted;
                }

                return false;
            }

            _emptyLineBytes = 0;
            _headerState.Reset();
        }

        bool complete;
        try
        {
            complete = headerSet.TryParseHeaders(_request, ref reader, limits, ref _headerState);
        }
        finally
        {
            _input.Consume(reader.Position);
        }

        if (!complete)
        {
            WaitForRestOfHead(Http1ConnectionStatus.ReceivingHeaders);
            return false;
        }

        return true;
    }

    /// <summary>
    /// A head waits for more bytes: its request-headers deadline is armed the first time (from then on it runs until the
    /// head is complete, however many reads it takes), and the status says how far it got.
    /// </summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    private void WaitForRestOfHead(Http1ConnectionStatus status)
    {
        if (_status is not (Http1ConnectionStatus.ReceivingRequestLine or Http1ConnectionStatus.ReceivingHeaders))
        {
            // Fails when the deadline expired: the loop sees it before it waits (EndHeadAfterExpiryAsync).
            _deadline.TrySet(_settings.DeadlineAfter(_settings.RequestHeadersTimeout));
        }

        _status = status;
    }

    /// <summary>
    /// Ends a connection whose head is incomplete and whose deadline expired: 408 when the request-headers deadline passed;
    /// closed without an answer when a stopping server expired the deadline of a connection that was idle as its first bytes
    /// came in (its receive is stopped, the rest of the head cannot arrive, and no timeout passed).
    /// </summary>
    private ValueTask EndHeadAfterExpiryAsync()
    {
        if (_deadline.HasPassed(_settings.TimeProvider.GetTimestamp()) || !_settings.Shutdown.IsCancellationRequested)
        {
            return RespondRequestTimeoutAsync();
        }

        _closeReason = ConnectionCloseReason.ServerStopping;
        return default;
    }

    /// <summary>Decides the body framing and resets the request state; false when the request was rejected (response written).</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private bool BeginRequest()
    {
        Volatile.Write(ref _requestCount, _requestCount + 1);
        _request.Forwarded?.Reset();
        KnownVersion version = _request.Version;
        bool http10 = version == KnownVersion.Http10;
        bool isHead = _request.Method == KnownMethod.Head;

        // A head without framing headers has no body and nothing to reject: decided here, inline, without the rejection's
        // handler around it.
        RequestBodyKind bodyKind = RequestBodyKind.None;
        long contentLength = 0;
        if ((_request.Method == KnownMethod.Connect || !RequestFraming.HasNoFramingHeaders(_requestHeaders))
            && !TryDetermineFraming(version, isHead, http10, out bodyKind, out contentLength))
        {
            return false;
        }

        _request.BodyKind = bodyKind;
        _requestKeepAlive = WantsKeepAlive(http10) && !_settings.Shutdown.IsCancellationRequested;
        bool expectContinue = !http10 && bodyKind != RequestBodyKind.None
            && HttpConnectionTokens.ContainsContinue(_requestHeaders.Expect);
        RestoreDataRates();
        _body.Reset(bodyKind, contentLength, expectContinue);
        _response.Reset(isHead, http10, _requestKeepAlive);
        _response.AllowSynchronousWrites = _settings.AllowSynchronousWrites;
        return true;
    }

    /// <summary>
    /// <see cref="BeginRequest"/>'s framing decision for a CONNECT or a head with Content-Length or Transfer-Encoding; false when
    /// the request is rejected (its response written).
    /// </summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    private bool TryDetermineFraming(KnownVersion version, bool isHead, bool http10, out RequestBodyKind bodyKind, out long contentLength)
    {
        try
        {
            if (_request.Method == KnownMethod.Connect && !_settings.AllowConnect)
            {
                // RFC 9110 section 9.3.6: CONNECT asks for a tunnel, which this server does not make for any target.
                // 501 says exactly that (section 15.6.2); a 405 would need an Allow list only the application knows.
                BadHttpRequestException.Throw(RequestRejectionReason.ConnectNotSupported);
            }

            bodyKind = RequestFraming.Determine(_requestHeaders, version, _settings.Limits, out contentLength);
            return true;
        }
        catch (BadHttpRequestException exception)
        {
            ReportRejection(exception);
            _response.Reset(isHead, http10, keepAlive: false);
            _response.TryWriteEmptyResponse(exception.StatusCode, keepAlive: false);
            _closeReason = ConnectionCloseReason.BadRequest;
            bodyKind = RequestBodyKind.None;
            contentLength = 0;
            return false;
        }
    }

    /// <summary>Completes the response after the handler returned or failed; true when the connection stays open.</summary>
    private bool EndRequest(Exception? failure)
    {
        if (failure is null && !_startedResponseFailed)
        {
            try
            {
                if (_body.Fault is { } fault)
                {
                    throw fault;
                }

                if (_settings.Shutdown.IsCancellationRequested
                    || (!_body.IsCompleted && !_body.CanDrain(_settings.MaxRequestBodyDrainSize)))
                {
                    _response.KeepAlive = false;
                }

                _response.Complete();
            }
            catch (Exception exception)
            {
                failure = exception;
            }
        }

        if (_startedResponseFailed || (failure is not null && !TryRespondToFailure(failure)))
        {
            EndFailedResponse();
            return false;
        }

        return !Signaled(Http1ConnectionSignals.AbortRequested) && _response.KeepAlive && !_body.Truncated;
    }

    private bool WantsKeepAlive(bool http10)
    {
        var connection = _requestHeaders.Connection;
        if (connection.Count == 0)
        {
            return !http10;
        }

        // The common values are known values of the header set, whose one shared instance the collection hands back: the
        // same instance is the same token, found without a scan.
        if (connection.Count == 1)
        {
            string? value = connection[0];
            if (ReferenceEquals(value, HttpConnectionTokens.KeepAlive))
            {
                return true;
            }

            if (ReferenceEquals(value, HttpConnectionTokens.Close))
            {
                return false;
            }
        }

        if (HttpConnectionTokens.ContainsClose(connection))
        {
            return false;
        }

        return !http10 || HttpConnectionTokens.ContainsKeepAlive(connection);
    }
}
