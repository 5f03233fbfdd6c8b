using System.Threading.Tasks;
using Falconet.Diagnostics;

namespace Falconet.Http.Http1;

// Timekeeping seen from the connection: the heartbeat and a stopping server wake the loop by stopping its receive,
// and a head that missed its deadline is answered 408.
internal sealed partial class HttpConnection
{
    /// <summary>
    /// Server stopping: a connection lingering after its last response stops receiving, and its loop closes it gracefully;
    /// so does one waiting for its next request, at once, or with <see cref="HttpConnectionSettings.DrainIdleTimeout"/> once it
    /// has waited that long: a request its client sends meanwhile is answered (with Connection: close) instead of meeting a
    /// close that races it.
    /// </summary>
    /// <remarks>
    /// Pairs with the loop, which publishes its status (<see cref="Http1ConnectionStatus.WaitingForRequest"/> or
    /// <see cref="Http1ConnectionStatus.Lingering"/>) and its deadline before it reads the shutdown signal: the server
    /// cancels that signal before calling this, so one side always sees the other. Bytes of a request may arrive as the
    /// receive is stopped: the loop then answers the request if its head came whole, and closes without an answer otherwise.
    /// </remarks>
    public void CloseIfIdle()
    {
        if (_status == Http1ConnectionStatus.WaitingForRequest && _settings.DrainIdleTimeout > 0)
        {
            // The heartbeat closes it when the shortened deadline passes, as for a keep-alive timeout.
            _deadline.TryBringForward(_settings.DeadlineAfter(_settings.DrainIdleTimeout));
            return;
        }

        if (_status is Http1ConnectionStatus.WaitingForRequest or Http1ConnectionStatus.Lingering && _deadline.TryExpireNow())
        {
            StopReceiving();
        }
    }

    /// <summary>
    /// Called by the server's heartbeat: expires a deadline that has passed and wakes the loop by stopping its receive;
    /// stops the receive of a request body that arrives below its minimum rate (the body read then fails with 408);
    /// resets a connection whose client reads the response below its minimum rate (it cannot be told otherwise).
    /// </summary>
    public void OnHeartbeat(long now)
    {
        if (_deadline.TryExpireIfPassed(now))
        {
            StopReceiving();
        }

        switch (_rates.Check(now))
        {
            case ConnectionCloseReason.MinRequestBodyDataRate:
                StopReceiving();
                break;
            case ConnectionCloseReason.MinResponseDataRate:
                Signal(Http1ConnectionSignals.AbortRequested);
                _transport.Abort();
                break;
        }
    }

    /// <summary>Wakes a pending receive for good (it returns what had arrived, or 0); later receives return 0.</summary>
    private void StopReceiving()
    {
        Signal(Http1ConnectionSignals.ReceiveStopped);
        _transport.StopReceiving();
    }

    /// <summary>Answers 408 with Connection: close to a request whose head did not arrive in time.</summary>
    private ValueTask RespondRequestTimeoutAsync()
    {
        HttpLog.RequestHeadersTimedOut(_settings.Logger, Id);
        ServerMetrics.Count(ServerMetrics.RejectedRequests, ConnectionCloseReasons.Name(ConnectionCloseReason.RequestHeadersTimeout));
        _response.Reset(isHead: false, http10: false, keepAlive: false);
        _response.TryWriteEmptyResponse(408, keepAlive: false);
        CloseAfterResponse(ConnectionCloseReason.RequestHeadersTimeout);
        return _output.FlushAsync();
    }
}
