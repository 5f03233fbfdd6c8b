using System;
using Falconet.Diagnostics;

namespace Falconet.Http.Http1;

// How a failed request is answered and reported: a rejection with its reason and status, an application failure
// with 500, or, once the response has started, the close that cuts it short.
internal sealed partial class HttpConnection
{
    // The handler reported a failure after its response started and logged it itself (HttpContext.FailStartedResponse).
    private bool _startedResponseFailed;

    /// <summary>
    /// The handler failed after its response started and reported it itself: the response ends as when the handler
    /// throws then (<see cref="EndFailedResponse"/>), without the server logging the failure again.
    /// </summary>
    public void FailStartedResponse()
    {
        if (!_response.HasStarted)
        {
            throw new InvalidOperationException("The response has not started: answer the failure with an error status instead.");
        }

        _startedResponseFailed = true;
        _closeReason = ConnectionCloseReason.ApplicationError;
    }

    /// <summary>
    /// Ends a response that started and cannot complete. What it wrote goes out (a flush the handler made before it failed
    /// included), then the connection closes without the response's end: no last chunk, or fewer bytes than its
    /// Content-Length, so the client sees it cut short (as with Kestrel). A response the close delimits (HTTP/1.0 without
    /// Content-Length) would look complete that way, and a client too slow to read gets nothing more: those are reset.
    /// </summary>
    private void EndFailedResponse()
    {
        _startedResponseFailed = false;
        if (_response.IsCloseDelimited || _rates.Violation == ConnectionCloseReason.MinResponseDataRate)
        {
            Signal(Http1ConnectionSignals.AbortRequested);
        }
    }

    /// <summary>Answers a failed request with its error status when the response has not started; false when it had (see <see cref="EndFailedResponse"/>).</summary>
    private bool TryRespondToFailure(Exception exception)
    {
        BadHttpRequestException? badRequest = exception as BadHttpRequestException ?? _body.Fault;
        if (_rates.Violation == ConnectionCloseReason.MinResponseDataRate)
        {
            // The heartbeat reset the connection under a write: the client's doing, not the application's.
            return false;
        }

        if (_response.HasStarted)
        {
            // A bad request body found after the response started is the client's fault, not the application's.
            if (badRequest is not null)
            {
                ReportRejection(badRequest);
            }
            else
            {
                HttpLog.ApplicationError(_settings.Logger, Id, exception);
            }

            HttpLog.AbortedAfterStart(_settings.Logger, Id);
            _closeReason = badRequest is not null ? ConnectionCloseReason.BadRequest : ConnectionCloseReason.ApplicationError;
            return false;
        }

        int statusCode;
        bool keepAlive;
        if (badRequest is not null)
        {
            ReportRejection(badRequest);
            statusCode = badRequest.StatusCode;
            keepAlive = false;
            _closeReason = ConnectionCloseReason.BadRequest;
        }
        else
        {
            HttpLog.ApplicationError(_settings.Logger, Id, exception);
            statusCode = 500;
            keepAlive = _requestKeepAlive && !_settings.Shutdown.IsCancellationRequested
                && _body.CanDrain(_settings.MaxRequestBodyDrainSize);
            if (!keepAlive && _requestKeepAlive)
            {
                _closeReason = ConnectionCloseReason.ApplicationError;
            }
        }

        return _response.TryWriteEmptyResponse(statusCode, keepAlive);
    }

    /// <summary>Logs a refused request with its reason and counts it in <see cref="ServerMetrics.RejectedRequests"/>.</summary>
    private void ReportRejection(BadHttpRequestException rejection)
    {
        string reason = RequestRejections.GetName(rejection.Reason);
        HttpLog.BadRequest(_settings.Logger, Id, reason, rejection.StatusCode, rejection.Message);
        ServerMetrics.Count(ServerMetrics.RejectedRequests, reason);
    }
}
