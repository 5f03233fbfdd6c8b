using System;
using System.IO;
using System.Net;
using System.Runtime.CompilerServices;
using System.Threading;
using System.Threading.Tasks;
using Falconet.Buffers;
using Falconet.Diagnostics;
using Falconet.Transport;

namespace Falconet.Http.Http2;

/// <summary>
/// One HTTP/2 stream: its state (<see cref="Http2StreamState"/>), its flow-control windows, the request body received and
/// not yet read, and the request, response and context objects the application sees. Pooled by its connection: the
/// objects are made once and reset for every stream that reuses them.
/// </summary>
/// <remarks>
/// The read loop opens it and runs its handler inline; a handler that completes synchronously has its response written
/// right there, into the read batch's send. One that goes asynchronous continues on its own (the read loop goes on with the
/// other streams), and its response is completed where the connection's code runs. State, windows and the received body
/// change only under the connection's lock (<see cref="Http2Output.Gate"/>). This file holds the lifecycle; the request
/// body is in Http2Stream.Body.cs, the response's sending in Http2Stream.Response.cs.
/// </remarks>
internal sealed partial class Http2Stream : IHttpContextOwner
{
    private readonly Http2Connection _connection;
    private readonly Http2Output _output;
    private readonly HttpConnectionSettings _settings;
    private readonly IoThreadReturn _ioThread;
    private readonly DataRateMonitor _rates;
    private RequestAbortSignal _abort = new();
    private ConnectionMeasurement _metrics;
    private bool _appRunning;

    public Http2Stream(Http2Connection connection, HttpConnectionSettings settings)
    {
        _connection = connection;
        _output = connection.Output;
        _settings = settings;
        TransportConnection transport = connection.Transport;
        _ioThread = new IoThreadReturn(transport);
        _rates = new DataRateMonitor(settings.TimeProvider, settings.MinRequestBodyDataRate, settings.MinResponseDataRate);
        _received = new BlockChain(transport.Pool);
        HeaderSetBinding headerSet = settings.HeaderSet;
        RequestHeaders = headerSet.CreateRequestHeaders();
        Body = new RequestBodyReader(this);
        Request = headerSet.CreateRequest(RequestHeaders, Body);
        Response = headerSet.CreateResponse(this, transport.Pool);
        Response.Shutdown = settings.Shutdown;
        Context = headerSet.CreateContext(this, Request, Response);
    }

    /// <summary>The stream identifier (odd: streams are opened by the client).</summary>
    public int Id { get; private set; }

    public Http2StreamState State { get; private set; }

    /// <summary>How the stream closed, once it did (<see cref="Http2StreamState.Closed"/>).</summary>
    public Http2StreamClosure Closure { get; private set; }

    public RequestHeaders RequestHeaders { get; }

    public HttpRequest Request { get; }

    public HttpResponse Response { get; }

    public RequestBodyReader Body { get; }

    public HttpContext Context { get; }

    /// <summary>The request and response rates of this stream (checked by the connection on every heartbeat).</summary>
    public DataRateMonitor Rates => _rates;

    /// <summary>True from the handler's start until its response is sent (or abandoned): the object is not free before.</summary>
    public bool IsAppRunning => _appRunning;

    long IHttpContextOwner.ConnectionId => _connection.Id;

    EndPoint? IHttpContextOwner.LocalEndPoint => _connection.Transport.LocalEndPoint;

    EndPoint? IHttpContextOwner.RemoteEndPoint => _connection.Transport.RemoteEndPoint;

    long IHttpContextOwner.RequestNumber => RequestNumber;

    TransportConnection IHttpContextOwner.Transport => _connection.Transport;

    CancellationToken IHttpContextOwner.RequestAborted => _abort.Token;

    int IHttpContextOwner.StreamId => Id;

    /// <summary>The ordinal of this stream's request on its connection.</summary>
    public long RequestNumber { get; private set; }

    /// <summary>Resets the stream with INTERNAL_ERROR (the application's <see cref="HttpContext.Abort"/>).</summary>
    void IHttpContextOwner.Abort() => ResetFromApplication(Http2ErrorCode.InternalError);

    /// <summary>Resets the stream with <paramref name="errorCode"/> (the application's <see cref="HttpContext.Reset"/>).</summary>
    void IHttpContextOwner.Reset(int errorCode) => ResetFromApplication((Http2ErrorCode)(uint)errorCode);

    /// <summary>Takes a pooled object into use for stream <paramref name="id"/> (under the lock, on the read loop).</summary>
    public void Open(int id, long requestNumber, int receiveWindow, long sendWindow, bool requestEnded)
    {
        Id = id;
        RequestNumber = requestNumber;

        // A HEADERS with END_STREAM opens the stream half-closed (remote) at once (RFC 9113 section 5.1).
        State = requestEnded ? Http2StreamState.HalfClosedRemote : Http2StreamState.Open;
        _receiveWindow = receiveWindow;
        _sendWindow = sendWindow;
        _consumedUnacknowledged = 0;
        _receivedTotal = 0;
        _expectedLength = -1;
        _bodyFault = null;
        _expectContinue = false;
        _continueSent = false;
        _blockedOnWindow = false;
        _resetCode = Http2ErrorCode.NoError;
        _appRunning = true;
        if (_abort.IsAborted)
        {
            // Sticky by design on HTTP/1.1 (every later request of a connection that went away); a stream starts afresh.
            _abort = new RequestAbortSignal();
        }

        _rates.ResetBody();
        _rates.SendEnded();
        ResetApplicationState();
    }

    /// <summary>
    /// Runs the application for the request (on the read loop, which has validated the head and handled the rest of the
    /// read batch): inline, so a handler that completes synchronously has its response written into the read batch's send
    /// without a thread switch.
    /// </summary>
    public void Start()
    {
        _metrics.RequestStarted(Request);
        ValueTask handling;
        try
        {
            handling = _settings.Application.Handle(Context);
        }
        catch (Exception exception)
        {
            HandlerExecutionContext.Restore(_connection.ExecutionContext);
            Finish(exception);
            return;
        }

        HandlerExecutionContext.Restore(_connection.ExecutionContext);

        if (!handling.IsCompleted)
        {
            _ = AwaitHandlerAsync(handling);
            return;
        }

        Exception? failure = null;
        try
        {
            handling.GetAwaiter().GetResult();
        }
        catch (Exception exception)
        {
            failure = exception;
        }

        Finish(failure);
    }

    /// <summary>Answers a request the server refuses itself (a bad header section, 413, 431, 501), without the application.</summary>
    public void Reject(BadHttpRequestException rejection)
    {
        _metrics.RequestStarted(Request);
        _connection.ReportRejection(rejection);
        Response.TryWriteEmptyResponse(rejection.StatusCode, keepAlive: true);
        Finish(null);
    }

    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder))]
    private async ValueTask AwaitHandlerAsync(ValueTask handling)
    {
        Exception? failure = null;
        try
        {
            await handling.ConfigureAwait(false);
        }
        catch (Exception exception)
        {
            failure = exception;
        }

        // The handler finished elsewhere: the response is completed where the connection's code runs (its loop).
        if (!_connection.Transport.IsOnIoThread)
        {
            await _ioThread.Return();
        }

        Finish(failure);
    }

    /// <summary>Completes the response after the handler returned or failed, then frees the stream once all of it is out.</summary>
    private void Finish(Exception? failure)
    {
        bool sent = true;
        try
        {
            sent = CompleteResponse(failure);
        }
        catch (Exception exception)
        {
            HttpLog.ConnectionError(_settings.Logger, _connection.Id, exception);
        }

        if (!sent)
        {
            _ = SendRestAsync();
            return;
        }

        Done(failure);
    }

    /// <summary>True when the whole response is out (or the stream is gone); false when body bytes wait for window.</summary>
    private bool CompleteResponse(Exception? failure)
    {
        if (failure is null && Body.Fault is { } fault && !IsReset)
        {
            failure = fault;
        }

        if (failure is null && _failedAfterStart)
        {
            // A framework reported (and logged) the handler's failure after its response started.
            if (!IsReset)
            {
                ResetFromServer(Http2ErrorReason.ApplicationError);
            }

            return true;
        }

        if (failure is null)
        {
            try
            {
                if (!Response.HasCompleted)
                {
                    Response.Complete();
                }

                return Response.Http2TrySendRest();
            }
            catch (Exception exception)
            {
                failure = exception;
            }
        }

        if (IsReset)
        {
            // The client went away (or reset the stream): what the handler did next is not its error.
            return true;
        }

        BadHttpRequestException? badRequest = failure as BadHttpRequestException;
        if (Response.HasStarted)
        {
            if (badRequest is not null)
            {
                _connection.ReportRejection(badRequest);
            }
            else
            {
                HttpLog.ApplicationError(_settings.Logger, _connection.Id, failure);
            }

            ResetFromServer(Http2ErrorReason.ApplicationError);
            return true;
        }

        int statusCode;
        if (badRequest is not null)
        {
            _connection.ReportRejection(badRequest);
            statusCode = badRequest.StatusCode;
        }
        else
        {
            HttpLog.ApplicationError(_settings.Logger, _connection.Id, failure);
            statusCode = 500;
        }

        Response.TryWriteEmptyResponse(statusCode, keepAlive: true);
        return Response.Http2TrySendRest();
    }

    /// <summary>Sends what window and output room held back, then frees the stream.</summary>
    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder))]
    private async ValueTask SendRestAsync()
    {
        try
        {
            while (!Response.Http2TrySendRest())
            {
                await WaitToSendAsync().ConfigureAwait(false);
            }
        }
        catch (Exception)
        {
            // Reset, or the connection closed: the response cannot be completed, and the stream is closed already.
        }

        Done(null);
    }

    /// <summary>
    /// The handler and its response are done. Unread body bytes go back to the connection window. A request whose body is
    /// still arriving is drained, as HTTP/1.1 drains an unread body: up to <see cref="HttpConnectionSettings.MaxRequestBodyDrainSize"/>
    /// more bytes are read and dropped (the stream stays half-closed, so the client's frames on it are still checked),
    /// and past that, or with a declared remainder past it, the client is told to stop (RST_STREAM NO_ERROR, RFC 9113
    /// section 8.1). The object goes back to the pool once the stream is closed.
    /// </summary>
    private void Done(Exception? failure)
    {
        _metrics.RequestEnded(Request, Response.StatusCode, failure);
        _abort.EndRequest();
        lock (_output.Gate)
        {
            DiscardReceivedLocked();
            _appRunning = false;
            if (State == Http2StreamState.HalfClosedLocal && !IsReset
                && (_expectedLength < 0 || _expectedLength - _receivedTotal <= _settings.MaxRequestBodyDrainSize))
            {
                _drainLimit = _receivedTotal + _settings.MaxRequestBodyDrainSize;
                _rates.BodyWaitStarted();
            }
            else if (State != Http2StreamState.Closed)
            {
                // Half-closed (local) past the drain size: the rest of the body is not needed (NO_ERROR). Anything else: the
                // response could not complete.
                StopLocked(State == Http2StreamState.HalfClosedLocal ? Http2ErrorCode.NoError : Http2ErrorCode.InternalError);
            }
            else
            {
                _connection.ReleaseLocked(this);
            }
        }

        _output.Flush();
    }

    private long _drainLimit;

    /// <summary>Ends a stream whose handler is done: RST_STREAM with <paramref name="code"/>, then closed and freed (under the lock).</summary>
    private void StopLocked(Http2ErrorCode code)
    {
        _resetCode = code == Http2ErrorCode.NoError ? Http2ErrorCode.Cancel : code;
        if (!_output.IsClosed)
        {
            _output.WriteRstStream(Id, code);
        }

        CloseLocked(Http2StreamClosure.ResetByServer);
    }

    /// <summary>The client's END_STREAM arrived (under the lock).</summary>
    public void EndOfRequestLocked()
    {
        if (State == Http2StreamState.Open)
        {
            State = Http2StreamState.HalfClosedRemote;
        }
        else if (State == Http2StreamState.HalfClosedLocal)
        {
            CloseLocked(Http2StreamClosure.Ended);
        }

        WakeReaderLocked();
    }

    /// <summary>The server sent END_STREAM (under the lock).</summary>
    public void EndOfResponseLocked()
    {
        if (State == Http2StreamState.Open)
        {
            State = Http2StreamState.HalfClosedLocal;
        }
        else if (State == Http2StreamState.HalfClosedRemote)
        {
            CloseLocked(Http2StreamClosure.Ended);
        }
    }

    /// <summary>True once the stream was reset by either side, or its connection ended.</summary>
    public bool IsReset => _resetCode != Http2ErrorCode.NoError || _output.IsClosed
        || (State == Http2StreamState.Closed && Closure != Http2StreamClosure.Ended);

    private Http2ErrorCode _resetCode;

    /// <summary>The client reset the stream (under the lock): the handler's waits fail, RequestAborted is cancelled.</summary>
    public void ResetByPeerLocked(Http2ErrorCode code)
    {
        _resetCode = code == Http2ErrorCode.NoError ? Http2ErrorCode.Cancel : code;
        Abandon(new IOException($"The client reset the stream ({Http2Errors.GetCodeName(code)})."));
        DiscardReceivedLocked();
        CloseLocked(Http2StreamClosure.ResetByPeer);
    }

    /// <summary>The server resets the stream for <paramref name="reason"/> (a stream error, or a failed handler).</summary>
    public void ResetFromServer(Http2ErrorReason reason)
    {
        lock (_output.Gate)
        {
            ResetFromServerLocked(Http2Errors.GetCode(reason));
        }

        _connection.ReportStreamError(Id, reason);
        _output.Flush();
    }

    private void ResetFromApplication(Http2ErrorCode code)
    {
        lock (_output.Gate)
        {
            ResetFromServerLocked(code);
        }

        _output.Flush();
    }

    /// <summary>Writes RST_STREAM and closes, unless the stream is closed already (under the lock).</summary>
    public void ResetFromServerLocked(Http2ErrorCode code)
    {
        if (State is Http2StreamState.Closed or Http2StreamState.Idle)
        {
            return;
        }

        _resetCode = code == Http2ErrorCode.NoError ? Http2ErrorCode.Cancel : code;
        if (!_output.IsClosed)
        {
            _output.WriteRstStream(Id, code);
        }

        Abandon(new IOException($"The stream was reset ({Http2Errors.GetCodeName(code)})."));
        DiscardReceivedLocked();
        CloseLocked(Http2StreamClosure.ResetByServer);
    }

    /// <summary>The connection ended (under the lock): the handler's waits fail and RequestAborted is cancelled.</summary>
    public void ConnectionEndedLocked(Exception reason)
    {
        Abandon(reason);
        DiscardReceivedLocked();
        if (State != Http2StreamState.Closed)
        {
            _resetCode = Http2ErrorCode.Cancel;
            CloseLocked(Http2StreamClosure.ResetByServer);
        }
    }

    /// <summary>
    /// A stream refused before its handler started (a malformed head): reset with <paramref name="code"/> and freed at once
    /// (under the lock).
    /// </summary>
    public void AbandonUnstartedLocked(Http2ErrorCode code)
    {
        _appRunning = false;
        ResetFromServerLocked(code);
    }

    /// <summary>
    /// A stream whose handler never ran (its header block did not decode, or it was reset or its connection ended before its
    /// handler's start at the end of the read batch): closed if it is not yet, and freed, nothing sent (under the lock).
    /// </summary>
    public void DiscardUnstartedLocked()
    {
        _appRunning = false;
        if (State == Http2StreamState.Closed)
        {
            _connection.ReleaseLocked(this);
            return;
        }

        _resetCode = Http2ErrorCode.Cancel;
        CloseLocked(Http2StreamClosure.ResetByServer);
    }

    /// <summary>Sends the connection's buffered frames (or leaves them to the read loop's batch on its thread).</summary>
    public void Flush() => _output.Flush();

    private void Abandon(Exception reason)
    {
        _abort.Abort();
        _readSignal.Fail(reason);
        _sendSignal.Fail(reason);
        _output.RemoveBlocked(this);
    }

    /// <summary>The stream reaches closed (under the lock); a stream whose handler is done goes back to the pool, last thing.</summary>
    private void CloseLocked(Http2StreamClosure closure)
    {
        if (State == Http2StreamState.Closed)
        {
            return;
        }

        State = Http2StreamState.Closed;
        Closure = closure;
        _rates.SendEnded();
        _connection.StreamClosedLocked(this);
        if (!_appRunning)
        {
            _connection.ReleaseLocked(this);
        }
    }

    /// <summary>Back in the connection's pool (under the lock): returns the blocks it held.</summary>
    public void Recycle()
    {
        State = Http2StreamState.Idle;
        Id = 0;
        _received.Dispose();
        Response.ReleaseBuffers();
    }
}
