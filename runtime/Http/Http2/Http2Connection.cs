using System;
using System.Buffers;
using System.Collections.Generic;
using System.Diagnostics;
using System.IO;
using System.Threading;
using System.Threading.Tasks;
using Falconet.Buffers;
using Falconet.Diagnostics;
using Falconet.Transport;

namespace Falconet.Http.Http2;

/// <summary>
/// Runs HTTP/2 (RFC 9113) on one transport connection: reads frames, keeps the connection's settings, windows and
/// streams, runs each request's handler, and sends responses as HEADERS and DATA frames within the peer's flow-control
/// windows. Everything below the protocol (pool, transport, TLS) and above it (header collections, request, response and
/// context objects, the application) is the HTTP/1.1 server's.
/// </summary>
/// <remarks>
/// <para>
/// One read loop per connection, started where the transport schedules the connection (its libuv loop, the thread pool):
/// it receives, handles every complete frame of what arrived, and sends the frames that produced in one gathered send, as
/// the HTTP/1.1 loop does for a pipelined batch. A stream's handler runs inline in the loop (a handler that completes
/// synchronously costs no thread switch and its response leaves with the batch); one that goes asynchronous continues on
/// its own while the loop serves the other streams, and comes back to the connection's thread to complete. A request with
/// a body has its handler started once the whole batch is handled, so the body that came with its head is already
/// buffered; a handler waiting for body bytes that the loop receives continues on the loop too, after the batch.
/// </para>
/// <para>
/// Files: this one holds the lifecycle and the read loop; Http2Connection.Frames.cs the frame handlers,
/// Http2Connection.Streams.cs the stream table and windows, Http2Connection.Headers.cs the header blocks,
/// Http2Connection.Lifetime.cs deadlines, GOAWAY, errors and closing.
/// </para>
/// </remarks>
internal sealed partial class Http2Connection : ServerConnection
{
    private readonly TransportConnection _transport;
    private readonly HttpConnectionSettings _settings;
    private readonly Http2Limits _limits;
    private readonly BlockChain _input;
    private readonly DataRateMonitor _rates;
    private readonly ConnectionDeadline _deadline = new();
    private readonly ServerConnection _owner;
    private ConnectionMeasurement _metrics;
    private bool _prefaceReceived;
    private bool _settingsReceived;
    private volatile bool _receiveStopped;
    private bool _peerClosed;
    private volatile bool _lingering;
    private volatile bool _abortRequested;

    // What the read loop leaves for the end of its batch (its own lists: only its thread touches them).
    private readonly List<Http2Stream> _startAfterBatch = new();
    private readonly List<Http2Stream> _wakeAfterBatch = new();

    /// <summary>A connection that negotiated h2 (ALPN), or a plain-HTTP endpoint that serves HTTP/2 only.</summary>
    public Http2Connection(TransportConnection transport, HttpConnectionSettings settings)
        : this(transport, settings, owner: null)
    {
    }

    /// <summary>
    /// <paramref name="owner"/>: the HTTP/1.1 connection that found the HTTP/2 preface and hands over (it stays what the
    /// server registered, and closes the transport); null when this connection is registered itself.
    /// </summary>
    public Http2Connection(TransportConnection transport, HttpConnectionSettings settings, ServerConnection? owner)
    {
        ExecutionContext = HandlerExecutionContext.Capture();
        _transport = transport;
        _settings = settings;
        _limits = settings.Http2;
        _owner = owner ?? this;
        _input = new BlockChain(transport.Pool);
        _rates = new DataRateMonitor(settings.TimeProvider, minRequestBodyRate: default, settings.MinResponseDataRate);
        Output = new Http2Output(transport, settings.OutputBufferLimit, _rates);
        long now = settings.TimeProvider.GetTimestamp();
        long frequency = settings.TimeProvider.TimestampFrequency;
        _resetBudget = new Http2FrameBudget(_limits.StreamResetRate, frequency, now);
        _controlBudget = new Http2FrameBudget(_limits.ControlFrameRate, frequency, now);
        _emptyBudget = new Http2FrameBudget(_limits.EmptyFrameRate, frequency, now);
        _receiveWindow = _limits.InitialConnectionWindowSize;
        StreamWindowUpdateThreshold = Math.Max(1, _limits.InitialStreamWindowSize / 2);
        _connectionWindowUpdateThreshold = Math.Max(1, _limits.InitialConnectionWindowSize / 2);
        _decoder = CreateDecoder();

        // :path is bounded as an HTTP/1.1 request line is (414 past it).
        _head = new Http2RequestHead(settings.Limits.MaxRequestLineSize);
    }

    /// <summary>The execution context the connection's streams start from (<see cref="HandlerExecutionContext"/>).</summary>
    internal ExecutionContext? ExecutionContext { get; }

    /// <summary>The frames this connection sends, and its lock.</summary>
    public Http2Output Output { get; }

    public override TransportConnection Transport => _transport;

    /// <summary>The identifier the application sees (<see cref="HttpContext.ConnectionId"/>): the registered connection's.</summary>
    public new long Id => _owner.Id;

    public override long PeakBufferedOutput => Output.PeakBuffered;

    public override long RequestCount => Volatile.Read(ref _requestCount);

    /// <summary>True when the connection must be reset rather than closed gracefully.</summary>
    public bool AbortRequested => _abortRequested;

    public override void SetQueued(bool queued) => _metrics.SetQueued(queued);

    private bool _inadequateSecurity;

    /// <summary>The TLS connection does not meet RFC 9113 section 9.2: it is answered with GOAWAY INADEQUATE_SECURITY only.</summary>
    public void RefuseInadequateSecurity() => _inadequateSecurity = true;

    /// <summary>A connection registered on its own: serves, closes the transport, returns every block, and reports to the server.</summary>
    public override async Task RunAsync()
    {
        _metrics.ConnectionStarted(_transport.LocalEndPoint);
        await ServeAsync(ReadOnlySequence<byte>.Empty).ConfigureAwait(false);
        if (_abortRequested)
        {
            _transport.Abort();
        }

        try
        {
            await _transport.DisposeAsync().ConfigureAwait(false);
        }
        catch (Exception exception)
        {
            HttpLog.ConnectionError(_settings.Logger, Id, exception);
        }

        await ReleaseAsync().ConfigureAwait(false);
        _metrics.ConnectionEnded(_transport.LocalEndPoint);
        _settings.ConnectionClosed?.Invoke(this);
    }

    /// <summary>
    /// Runs the protocol until the connection ends: the server preface, then frames until the peer closes, an error, a
    /// deadline or a stop. <paramref name="received"/>: bytes an HTTP/1.1 connection received before it handed over.
    /// The caller closes the transport afterwards, then calls <see cref="ReleaseAsync"/>.
    /// </summary>
    public async Task ServeAsync(ReadOnlySequence<byte> received)
    {
        foreach (ReadOnlyMemory<byte> segment in received)
        {
            _input.Write(segment.Span);
        }

        try
        {
            SendServerPreface();
            if (_inadequateSecurity)
            {
                Http2ConnectionException.Throw(Http2ErrorReason.InadequateSecurity, "The TLS version or cipher suite is not one HTTP/2 may use.");
            }

            await ReadFramesAsync().ConfigureAwait(false);
        }
        catch (Http2ConnectionException error)
        {
            await FailAsync(error.Reason, error.Message).ConfigureAwait(false);
        }
        catch (Exception exception)
        {
            _abortRequested = true;
            HttpLog.ConnectionError(_settings.Logger, Id, exception);
        }

        if (_rates.Violation != ConnectionCloseReason.None)
        {
            _abortRequested = true;
            ReportClose(ConnectionCloseReasons.Name(_rates.Violation));
        }

        EndStreams(new ConnectionAbortedException("The HTTP/2 connection closed."));
        if (_failure is not null && !_abortRequested && !_receiveStopped && !_peerClosed)
        {
            await LingerAsync().ConfigureAwait(false);
        }

        // A send another thread started before the close (a handler's flush, a stopping server's GOAWAY) may still be
        // inside the transport, which the caller disposes next: wait for it. An aborted transport ends it at once.
        if (_abortRequested)
        {
            _transport.Abort();
        }

        await WaitForSendsAsync().ConfigureAwait(false);
    }

    private async Task ReadFramesAsync()
    {
        while (true)
        {
            if (_input.Length != 0)
            {
                Output.BeginBatch();
                bool parsed = false;
                try
                {
                    ProcessInput();
                    parsed = true;
                }
                finally
                {
                    RunAfterBatch(parsed);
                    Output.EndBatch();
                }
            }

            Output.SendNow();
            if (IsDone)
            {
                await WaitForSendsAsync().ConfigureAwait(false);
                return;
            }

            if (Output.IsOverLimit)
            {
                // A peer that sends frames and does not read the answers: stop reading until it does (bounded by the
                // minimum response data rate).
                await Output.WaitUntilDrainedAsync().ConfigureAwait(false);
            }

            ArmDeadline();
            if (_input.Length == 0)
            {
                _input.Dispose();
                Output.ReleaseIdleBlock();
            }

            Memory<byte> free = _input.GetWritableMemory(SlabMemoryPool.BlockSize / 2);
            int received;
            try
            {
                received = await _transport.ReceiveAsync(free).ConfigureAwait(false);
            }
            catch (ConnectionResetException)
            {
                _peerClosed = true;
                return;
            }

            if (received == 0)
            {
                _peerClosed = !_receiveStopped;
                await OnReceiveEndedAsync().ConfigureAwait(false);
                return;
            }

            _input.Advance(received);
        }
    }

    /// <summary>Handles every complete frame buffered (the preface first); a partial frame waits for more bytes.</summary>
    private void ProcessInput()
    {
        ReadOnlySequence<byte> input = _input.GetSequence();
        try
        {
            if (!_prefaceReceived)
            {
                if (!Http2Preface.IsPrefixOf(input))
                {
                    Http2ConnectionException.Throw(Http2ErrorReason.InvalidPreface, "The client did not start with the HTTP/2 connection preface.");
                }

                if (input.Length < Http2Preface.Length)
                {
                    return;
                }

                _prefaceReceived = true;
                input = input.Slice(Http2Preface.Length);
            }

            Span<byte> headerBytes = stackalloc byte[Http2FrameHeader.Size];
            while (input.Length >= Http2FrameHeader.Size && !IsDone)
            {
                input.Slice(0, Http2FrameHeader.Size).CopyTo(headerBytes);
                Http2FrameHeader header = Http2FrameHeader.Read(headerBytes);
                if (header.Length > _limits.MaxFrameSize)
                {
                    // RFC 9113 section 4.2: larger than the SETTINGS_MAX_FRAME_SIZE the server announced.
                    Http2ConnectionException.Throw(Http2ErrorReason.FrameTooLarge, $"A frame of {header.Length} bytes is larger than SETTINGS_MAX_FRAME_SIZE.");
                }

                if (input.Length < Http2FrameHeader.Size + header.Length)
                {
                    return;
                }

                ReadOnlySequence<byte> payload = input.Slice(Http2FrameHeader.Size, header.Length);
                input = input.Slice(payload.End);
                if (!_settingsReceived && header.Type != Http2FrameType.Settings)
                {
                    // Section 3.4: the preface ends with the client's SETTINGS frame.
                    Http2ConnectionException.Throw(Http2ErrorReason.InvalidPreface, "The client's first frame was not SETTINGS.");
                }

                ProcessFrame(header, payload);
            }
        }
        finally
        {
            _input.Consume(input.Start);
        }
    }

    /// <summary>
    /// Starts the handler of a new stream (<paramref name="stream"/>, its head validated): at once when the request ended
    /// with its HEADERS, otherwise once the read batch is handled, so the DATA frames that came with the HEADERS are in
    /// the stream's buffer when the handler first reads (a unary gRPC call reads its whole message without waiting).
    /// Once one start waits for the end of the batch, the later ones do too: handlers start in the order their streams
    /// opened.
    /// </summary>
    private void StartAfterBatch(Http2Stream stream, bool endStream)
    {
        if (endStream && _startAfterBatch.Count == 0)
        {
            stream.Start();
            return;
        }

        _startAfterBatch.Add(stream);
    }

    /// <summary>A handler's body read the read loop woke (under the lock): it continues in <see cref="RunAfterBatch"/>.</summary>
    public void WakeAfterBatch(Http2Stream stream)
    {
        Debug.Assert(Output.IsBatchThread, "Only the read loop wakes a body read, while it handles a batch.");
        _wakeAfterBatch.Add(stream);
    }

    /// <summary>
    /// The end of a read batch, on the read loop's thread, no lock held: the body reads its frames woke continue here,
    /// oldest streams first, then the handlers it deferred start, each on this thread as a handler started inline does. A
    /// stream reset (or a connection ended) before its handler started is freed without running it; after a connection
    /// error (<paramref name="parsed"/> false) no handler starts, and the woken reads find the connection ending.
    /// </summary>
    private void RunAfterBatch(bool parsed)
    {
        Debug.Assert(!Output.Gate.IsHeldByCurrentThread);
        for (int i = 0; i < _wakeAfterBatch.Count; i++)
        {
            _wakeAfterBatch[i].ContinueRead();
        }

        _wakeAfterBatch.Clear();
        for (int i = 0; i < _startAfterBatch.Count; i++)
        {
            Http2Stream stream = _startAfterBatch[i];
            if (parsed && !stream.IsReset)
            {
                stream.Start();
                continue;
            }

            lock (Output.Gate)
            {
                stream.DiscardUnstartedLocked();
            }
        }

        _startAfterBatch.Clear();
    }

    /// <summary>
    /// Waits until a send in flight completes, so the last frames (GOAWAY) leave before the transport closes, and no send
    /// is inside the transport when it is disposed; bounded, since a peer that does not read falls below the minimum
    /// response data rate and the heartbeat aborts the transport.
    /// </summary>
    private ValueTask WaitForSendsAsync() => Output.WaitUntilSentAsync();
}
