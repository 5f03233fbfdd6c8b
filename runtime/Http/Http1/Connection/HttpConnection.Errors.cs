using System;
using Falconet.Server;

namespace Falconet.Http.Http1;

// How a failed request is answered and reported: a rejection with its reason and status, an application failure
// with 500, or an abort once the response has started.
internal sealed partial class HttpConnection
{
    /// <summary>Answers a failed request with its error status when the response has not started; false means abort.</summary>
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
