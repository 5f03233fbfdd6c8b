using System;
using System.Buffers;
using System.Net;
using System.Threading;
using System.Threading.Tasks;
using Falconet.Transport;

namespace Falconet.Http;

/// <summary>
/// Runs HTTP/1.1 on one transport connection: parses every complete request of what has been received
/// (pipelining), runs the application, writes each response into output blocks and sends the whole batch
/// with one gathered call. Every object here lives as long as the connection and is reused per request.
/// </summary>
internal sealed class HttpConnection
{
    private static long s_nextId;

    private readonly TransportConnection _transport;
    private readonly HttpConnectionSettings _settings;
    private readonly Http1Input _input;
    private readonly Http1OutputBuffer _output;
    private readonly RequestHeaders _requestHeaders;
    private readonly HttpRequest _request;
    private readonly HttpResponse _response;
    private readonly RequestBodyReader _body;
    private readonly HttpContext _context;
    private ParsePhase _phase;
    private HeaderParseState _headerState;
    private bool _requestKeepAlive;
    private volatile bool _abortRequested;

    public HttpConnection(TransportConnection transport, HttpConnectionSettings settings)
    {
        _transport = transport;
        _settings = settings;
        Id = Interlocked.Increment(ref s_nextId);
        _input = new Http1Input(transport);
        _output = new Http1OutputBuffer(transport, settings.OutputBufferLimit);
        _requestHeaders = new RequestHeaders();
        _body = new RequestBodyReader(_input, _output, transport.Pool, settings.Limits);
        _request = new HttpRequest(_requestHeaders, _body);
        _response = new HttpResponse(new ResponseHeaders(), _output, transport.Pool);
        _body.Attach(_response);
        _context = new HttpContext(this, _request, _response);
    }

    public long Id { get; }

    public long RequestCount { get; private set; }

    public EndPoint? LocalEndPoint => _transport.LocalEndPoint;

    public EndPoint? RemoteEndPoint => _transport.RemoteEndPoint;

    /// <summary>The most output bytes this connection buffered at once (write-behind diagnostics).</summary>
    public long PeakBufferedOutput => _output.PeakBuffered;

    public void RequestAbort() => _abortRequested = true;

    /// <summary>Closes the connection at once (shutdown timeout passed).</summary>
    public void Abort()
    {
        _abortRequested = true;
        _transport.Abort();
    }

    /// <summary>Runs the connection until the peer closes, a request asks to close, or the server stops.</summary>
    public async Task RunAsync()
    {
        try
        {
            await ProcessRequestsAsync().ConfigureAwait(false);
        }
        catch (Exception exception)
        {
            _abortRequested = true;
            HttpLog.ConnectionError(_settings.Logger, Id, exception);
        }
        finally
        {
            _input.Dispose();
            _output.Dispose();
            _response.ReleaseBuffers();
        }

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
    }

    private async Task ProcessRequestsAsync()
    {
        CancellationToken shutdown = _settings.Shutdown;
        while (true)
        {
            bool parsed;
            try
            {
                parsed = TryParseRequestHead();
            }
            catch (BadHttpRequestException exception)
            {
                HttpLog.BadRequest(_settings.Logger, Id, exception.StatusCode, exception.Message);
                _response.Reset(isHead: false, http10: false, keepAlive: false);
                _response.TryWriteEmptyResponse(exception.StatusCode, keepAlive: false);
                await _output.FlushAsync().ConfigureAwait(false);
                return;
            }

            if (parsed)
            {
                // The request runs inside this method so that a handler completing synchronously costs no
                // state machine; an asynchronous one reuses this method's box for the whole connection.
                bool keepAlive = false;
                if (BeginRequest())
                {
                    Exception? failure = null;
                    try
                    {
                        ValueTask handling = _settings.Application.Handle(_context);
                        if (handling.IsCompleted)
                        {
                            handling.GetAwaiter().GetResult();
                        }
                        else
                        {
                            await handling.ConfigureAwait(false);
                        }
                    }
                    catch (Exception exception)
                    {
                        failure = exception;
                    }

                    keepAlive = EndRequest(failure);
                    if (keepAlive && !_body.IsCompleted)
                    {
                        // Send the response before waiting for body bytes that nobody will read.
                        await _output.FlushAsync().ConfigureAwait(false);
                        keepAlive = await _body.DrainAsync(_settings.MaxRequestBodyDrainSize, CancellationToken.None).ConfigureAwait(false);
                    }
                }

                if (_abortRequested)
                {
                    return;
                }

                if (!keepAlive)
                {
                    await _output.FlushAsync().ConfigureAwait(false);
                    return;
                }

                continue;
            }

            // Every complete request of this read is answered: send the batch in one call.
            await _output.FlushAsync().ConfigureAwait(false);

            bool idle = _input.Buffered == 0 && _phase == ParsePhase.RequestLine;
            if (idle && shutdown.IsCancellationRequested)
            {
                return;
            }

            // A connection waiting for the client holds only the block it receives into.
            _output.ReleaseIdleBlock();
            _response.ReleaseIdleBlock();

            int received;
            try
            {
                received = _input.EndReceive(await _input.BeginReceive(idle ? shutdown : CancellationToken.None).ConfigureAwait(false));
            }
            catch (OperationCanceledException) when (shutdown.IsCancellationRequested)
            {
                return;
            }

            if (received == 0)
            {
                return;
            }
        }
    }

    /// <summary>Parses the request line and headers from the buffered input; false when more bytes are needed.</summary>
    private bool TryParseRequestHead()
    {
        if (_input.Buffered == 0)
        {
            return false;
        }

        var reader = new SequenceReader<byte>(_input.GetSequence());
        var handler = new Http1ParsingHandler(_request, _requestHeaders);
        HttpLimits limits = _settings.Limits;
        if (_phase == ParsePhase.RequestLine)
        {
            if (!Http1Parser.TryParseRequestLine(ref handler, ref reader, limits))
            {
                return false;
            }

            _phase = ParsePhase.Headers;
            _headerState.Reset();
        }

        bool complete;
        try
        {
            complete = Http1Parser.TryParseHeaders(ref handler, ref reader, limits, ref _headerState);
        }
        finally
        {
            _input.Consume(reader.Position);
        }

        if (!complete)
        {
            return false;
        }

        _phase = ParsePhase.RequestLine;
        return true;
    }

    /// <summary>Decides the body framing and resets the request state; false when the request was rejected (response written).</summary>
    private bool BeginRequest()
    {
        RequestCount++;
        Interlocked.Increment(ref _settings.RequestsStarted);
        KnownVersion version = _request.Version;
        bool http10 = version == KnownVersion.Http10;
        bool isHead = _request.Method == KnownMethod.Head;

        RequestBodyKind bodyKind;
        long contentLength;
        try
        {
            bodyKind = RequestFraming.Determine(_requestHeaders, version, _settings.Limits, out contentLength);
        }
        catch (BadHttpRequestException exception)
        {
            HttpLog.BadRequest(_settings.Logger, Id, exception.StatusCode, exception.Message);
            _response.Reset(isHead, http10, keepAlive: false);
            _response.TryWriteEmptyResponse(exception.StatusCode, keepAlive: false);
            return false;
        }

        _request.BodyKind = bodyKind;
        _requestKeepAlive = WantsKeepAlive(http10) && !_settings.Shutdown.IsCancellationRequested;
        bool expectContinue = !http10 && bodyKind != RequestBodyKind.None
            && HttpConnectionTokens.ContainsContinue(_requestHeaders.Expect);
        _body.Reset(bodyKind, contentLength, expectContinue);
        _response.Reset(isHead, http10, _requestKeepAlive);
        return true;
    }

    /// <summary>Completes the response after the handler returned or failed; true when the connection stays open.</summary>
    private bool EndRequest(Exception? failure)
    {
        if (failure is null)
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

        if (failure is not null && !TryRespondToFailure(failure))
        {
            _abortRequested = true;
            return false;
        }

        return !_abortRequested && _response.KeepAlive && !_body.Truncated;
    }

    /// <summary>Answers a failed request with its error status when the response has not started; false means abort.</summary>
    private bool TryRespondToFailure(Exception exception)
    {
        BadHttpRequestException? badRequest = exception as BadHttpRequestException ?? _body.Fault;
        if (_response.HasStarted)
        {
            HttpLog.ApplicationError(_settings.Logger, Id, exception);
            HttpLog.AbortedAfterStart(_settings.Logger, Id);
            return false;
        }

        int statusCode;
        bool keepAlive;
        if (badRequest is not null)
        {
            HttpLog.BadRequest(_settings.Logger, Id, badRequest.StatusCode, badRequest.Message);
            statusCode = badRequest.StatusCode;
            keepAlive = false;
        }
        else
        {
            HttpLog.ApplicationError(_settings.Logger, Id, exception);
            statusCode = 500;
            keepAlive = _requestKeepAlive && !_settings.Shutdown.IsCancellationRequested
                && _body.CanDrain(_settings.MaxRequestBodyDrainSize);
        }

        return _response.TryWriteEmptyResponse(statusCode, keepAlive);
    }

    private bool WantsKeepAlive(bool http10)
    {
        var connection = _requestHeaders.Connection;
        if (connection.Count == 0)
        {
            return !http10;
        }

        if (HttpConnectionTokens.ContainsClose(connection))
        {
            return false;
        }

        return !http10 || HttpConnectionTokens.ContainsKeepAlive(connection);
    }

    private enum ParsePhase : byte
    {
        RequestLine,
        Headers,
    }
}
