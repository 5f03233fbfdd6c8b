using System;
using System.Threading;
using System.Threading.Tasks;

namespace Falconet.Http.Http1;

// How a connection ends: an abort asked by the application or the server, and the lingering close after a
// server-initiated close.
internal sealed partial class HttpConnection
{
    /// <summary>
    /// The connection has closed: the application's per-connection state (<see cref="HttpContext.ConnectionState"/>) is
    /// disposed when it is disposable, so it learns that the connection ended.
    /// </summary>
    private ValueTask DisposeConnectionStateAsync() => _context.DisposeConnectionStateAsync();

    /// <summary>The application asked for the connection to be reset after its handler returns.</summary>
    public void RequestAbort()
    {
        _closeReason = ConnectionCloseReason.ApplicationAbort;
        Signal(Http1ConnectionSignals.AbortRequested);
        _abortSignal.Abort();
    }

    /// <summary>Closes the connection at once (shutdown timeout passed).</summary>
    public override void Abort()
    {
        if (Volatile.Read(ref _http2) is { } http2)
        {
            http2.Abort();
            Signal(Http1ConnectionSignals.AbortRequested);
            return;
        }

        _closeReason = ConnectionCloseReason.ShutdownTimeout;
        Signal(Http1ConnectionSignals.AbortRequested);
        _abortSignal.Abort();
        _transport.Abort();
    }

    /// <summary>
    /// Lingering close (RFC 9112 section 9.6): shuts down the sending side, so the client reads the whole response and
    /// then the end of the stream, and reads and discards what it still sends until it closes, for at most
    /// <see cref="HttpConnectionSettings.LingerTime"/> or <see cref="HttpConnectionSettings.LingerMaxBytes"/>. Closing
    /// at once with unread input would send a reset, which can destroy the response before the client reads it.
    /// </summary>
    private async ValueTask LingerAsync()
    {
        ReleaseIdleBlocks();
        if (Signaled(Http1ConnectionSignals.ReceiveStopped))
        {
            // Receiving was stopped to wake this loop (a deadline passed): reads return nothing more, so the client gets
            // the linger time to read the response (framed by its Content-Length) before the close, unless the server
            // stops first. No FIN until then: Linux resets a socket whose both directions are shut down as soon as data
            // arrives, and a stopped sockets receive is shutdown(SHUT_RD). Rare, so a timer.
            try
            {
                await Task.Delay(HttpConnectionSettings.LingerTime, _settings.TimeProvider, _settings.Shutdown).ConfigureAwait(false);
            }
            catch (OperationCanceledException)
            {
            }

            return;
        }

        _transport.ShutdownSend();

        // Published before the shutdown signal is read, as for an idle connection (see CloseIfIdle).
        _status = Http1ConnectionStatus.Lingering;
        bool armed = _deadline.TrySet(_settings.DeadlineAfter(_settings.LingerTimeout));
        Interlocked.MemoryBarrier();
        if (!armed || _settings.Shutdown.IsCancellationRequested)
        {
            return;
        }

        long discarded = 0;
        while (discarded < HttpConnectionSettings.LingerMaxBytes)
        {
            discarded += _input.Buffered;
            _input.Consume(_input.GetSequence().End);
            int received;
            while (!_input.TryEndReceive(await _input.BeginReceive(CancellationToken.None).ConfigureAwait(false), out received))
            {
            }

            if (received == 0)
            {
                return;
            }
        }
    }

    /// <summary>
    /// Closes after the response just written, with a lingering close: the client may still be sending (the rest of a
    /// rejected request, a body nobody read, pipelined requests, or bytes it sends while it reads the response).
    /// </summary>
    private void CloseAfterResponse(ConnectionCloseReason reason)
    {
        _closeReason = reason;
        _status = Http1ConnectionStatus.ClosingAfterResponse;
    }

    /// <summary>Raises <paramref name="signal"/> for the loop; any thread may call it.</summary>
    private void Signal(Http1ConnectionSignals signal) => Interlocked.Or(ref _signals, (int)signal);

    /// <summary>True once <paramref name="signal"/> was raised.</summary>
    private bool Signaled(Http1ConnectionSignals signal) => (Volatile.Read(ref _signals) & (int)signal) != 0;

    /// <summary>Why a request that was handled does not keep the connection, when nothing said so earlier.</summary>
    private ConnectionCloseReason ReasonToClose()
    {
        if (_upgraded)
        {
            return ConnectionCloseReason.UpgradeEnded;
        }

        if (_body.Truncated)
        {
            // The client closed in the middle of its body.
            return ConnectionCloseReason.None;
        }

        if (_settings.Shutdown.IsCancellationRequested)
        {
            return ConnectionCloseReason.ServerStopping;
        }

        return _body.IsCompleted ? ConnectionCloseReason.ConnectionClose : ConnectionCloseReason.UnreadRequestBody;
    }
}
