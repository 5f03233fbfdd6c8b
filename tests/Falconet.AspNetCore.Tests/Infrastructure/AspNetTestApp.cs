using System;
using System.Collections.Concurrent;
using System.Linq;
using System.Net;
using System.Net.Http;
using System.Threading.Tasks;
using Falconet.Http.Tests.Infrastructure;
using Falconet.Server;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Hosting.Server;
using Microsoft.AspNetCore.Hosting.Server.Features;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;

namespace Falconet.AspNetCore.Tests.Infrastructure;

/// <summary>
/// An ASP.NET Core application on Falconet for one test, on 127.0.0.1 port 0 and the given transport: endpoints mapped by
/// the test, logs captured. Disposing it stops the host and checks that every pool block came back.
/// </summary>
internal sealed class AspNetTestApp : IAsyncDisposable
{
    private AspNetTestApp(WebApplication app, CapturingLoggerProvider logs)
    {
        App = app;
        Logs = logs;
        Server = (FalconetWebServer)app.Services.GetRequiredService<IServer>();
        string address = Server.Features.Get<IServerAddressesFeature>()!.Addresses.First();
        BaseAddress = new Uri(address + "/");
        EndPoint = Server.Server!.BoundEndpoints[0];
        Http = new HttpClient { BaseAddress = BaseAddress, Timeout = TestTimeouts.Operation };
    }

    public WebApplication App { get; }

    public FalconetWebServer Server { get; }

    public CapturingLoggerProvider Logs { get; }

    public Uri BaseAddress { get; }

    public IPEndPoint EndPoint { get; }

    public HttpClient Http { get; }

    public static async Task<AspNetTestApp> StartAsync(TransportKind transport, Action<WebApplication> map,
        Action<WebApplicationBuilder>? configure = null, string[]? args = null)
    {
        WebApplicationBuilder builder = WebApplication.CreateSlimBuilder(args ?? ["--urls", "http://127.0.0.1:0"]);
        var logs = new CapturingLoggerProvider();
        builder.Logging.ClearProviders().AddProvider(logs).SetMinimumLevel(LogLevel.Debug);
        builder.WebHost.UseFalconet(options =>
        {
            options.Transport = transport;
            options.IoThreadCount = 2;
            options.TrackPoolLeaks = true;
        });
        configure?.Invoke(builder);
        WebApplication app = builder.Build();
        map(app);
        await app.StartAsync().WaitAsync(TestTimeouts.Operation);
        return new AspNetTestApp(app, logs);
    }

    public RawClient Connect() => RawClient.Connect(EndPoint);

    public async ValueTask DisposeAsync()
    {
        Http.Dispose();
        await App.StopAsync().WaitAsync(TestTimeouts.Operation);
        await Server.Server!.WaitForAllBlocksReturnedAsync(TimeSpan.FromSeconds(5));
        await App.DisposeAsync();
    }
}
