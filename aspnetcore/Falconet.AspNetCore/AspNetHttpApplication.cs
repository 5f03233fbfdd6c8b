using System;
using System.Threading.Tasks;
using Microsoft.Extensions.Primitives;
using AspNetBadHttpRequestException = Microsoft.AspNetCore.Http.BadHttpRequestException;
using FalconetContext = Falconet.Http.HttpContext;
using FalconetHttpApplication = Falconet.Http.IHttpApplication;

namespace Falconet.AspNetCore;

/// <summary>
/// Runs an ASP.NET Core application (the host's <see cref="Microsoft.AspNetCore.Hosting.Server.IHttpApplication{TContext}"/>)
/// as Falconet's application: per request it resets the connection's features, lets the host create its context and run
/// the pipeline, and answers exceptions as Kestrel does (500 before the response started, abort after, both logged).
/// A pipeline that completes synchronously with nothing left to run returns a completed task: no state machine.
/// </summary>
internal sealed class AspNetHttpApplication<TContext> : FalconetHttpApplication
    where TContext : notnull
{
    private static readonly StringValues s_close = new("close");

    private readonly Microsoft.AspNetCore.Hosting.Server.IHttpApplication<TContext> _application;
    private readonly FalconetWebServerSettings _settings;

    public AspNetHttpApplication(Microsoft.AspNetCore.Hosting.Server.IHttpApplication<TContext> application, FalconetWebServerSettings settings)
    {
        _application = application;
        _settings = settings;
    }

    public ValueTask Handle(FalconetContext context)
    {
        if (context.ConnectionState is ConnectionFeatures<TContext> features)
        {
            features.Reset();
        }
        else
        {
            features = new ConnectionFeatures<TContext>(context, _settings);
            features.InitializeConnection();
            context.ConnectionState = features;
        }

        TContext hostContext = _application.CreateContext(features);
        Task processing;
        try
        {
            processing = _application.ProcessRequestAsync(hostContext);
        }
        catch (Exception exception)
        {
            processing = Task.FromException(exception);
        }

        if (processing.IsCompletedSuccessfully && !features.HasOnCompleted)
        {
            // A response without a body starts when the application returns: its OnStarting callbacks run now.
            ValueTask start = features.StartAsync();
            if (start.IsCompletedSuccessfully)
            {
                _application.DisposeContext(hostContext, null);
                return default;
            }

            return FinishAsync(features, hostContext, processing, start);
        }

        return FinishAsync(features, hostContext, processing, start: null);
    }

    private async ValueTask FinishAsync(ConnectionFeatures<TContext> features, TContext hostContext, Task processing, ValueTask? start)
    {
        Exception? failure = null;
        try
        {
            await processing.ConfigureAwait(false);
            await (start ?? features.StartAsync()).ConfigureAwait(false);
        }
        catch (Exception exception)
        {
            failure = exception;
            RespondToFailure(features, exception);
        }

        if (features.HasOnCompleted)
        {
            // A response completed here would leave nothing for Falconet to answer a broken body with: it would find the
            // body's fault after a sent response and reset the connection. Left to Falconet, the client gets the 400.
            if (failure is null && !features.RequestBodyFaulted)
            {
                try
                {
                    // OnCompleted callbacks run once the client has the response.
                    await features.CompleteAsync().ConfigureAwait(false);
                }
                catch (Exception exception)
                {
                    failure = exception;
                    RespondToFailure(features, exception);
                }
            }

            await features.FireOnCompletedAsync().ConfigureAwait(false);
        }

        _application.DisposeContext(hostContext, failure);
    }

    private void RespondToFailure(ConnectionFeatures<TContext> features, Exception exception)
    {
        if (exception is OperationCanceledException && features.Context.RequestAborted.IsCancellationRequested)
        {
            // The client went away (or the request was aborted) and the application gave up: not an application error.
            AspNetCoreLog.RequestAborted(_settings.Logger, features.ConnectionId, features.TraceIdentifier);
        }
        else if (exception is AspNetBadHttpRequestException && features.RequestBodyFaulted)
        {
            // The client sent a malformed body and the read's error reached here: the client's fault, which Falconet has
            // already logged and counted as a bad request (at Debug, so no client can flood the log).
            AspNetCoreLog.BadRequestBody(_settings.Logger, features.ConnectionId, features.TraceIdentifier, exception.Message);
        }
        else
        {
            AspNetCoreLog.ApplicationError(_settings.Logger, features.ConnectionId, features.TraceIdentifier, exception);
        }

        Falconet.Http.HttpResponse response = features.Context.Response;
        if (features.HasStarted)
        {
            // As Kestrel: what the response wrote goes out (a flush made before the failure included), then the connection
            // closes without the response's end, so the client sees it cut short.
            AspNetCoreLog.AbortedAfterStart(_settings.Logger, features.ConnectionId, features.TraceIdentifier);
            if (response.HasStarted)
            {
                features.Context.FailStartedResponse();
            }
            else
            {
                // Started only the ASP.NET Core way (OnStarting ran), nothing written: nothing to keep.
                features.Context.Abort();
            }

            return;
        }

        // As Kestrel: the headers the application set are dropped, and an empty error response goes out; the
        // connection stays open unless the request itself was bad.
        response.Headers.Clear();
        if (exception is AspNetBadHttpRequestException badRequest)
        {
            response.StatusCode = badRequest.StatusCode;
            response.Headers.Connection = s_close;
        }
        else
        {
            response.StatusCode = 500;
        }

        response.ContentLength = 0;
    }
}
