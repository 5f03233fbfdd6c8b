using System.Linq;
using System.Threading.Tasks;
using Falconet.Http.Tests.Infrastructure;
using Microsoft.Extensions.Logging;
using Shouldly;

namespace Falconet.Http.Tests.Server;

/// <summary>An accept loop that runs out of file descriptors backs off and accepts again, instead of failing or spinning.</summary>
public sealed class AcceptBackoffTests
{
    private const int OutOfDescriptorsEvent = 111;
    private const int AcceptingAgainEvent = 112;
    private const int AcceptFailedEvent = 104;

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Accepts_that_fail_for_lack_of_descriptors_are_retried_after_a_pause_logged_once()
    {
        var logs = new RecordingLoggerFactory();
        var transport = new InterceptingTransportFactory { FailingAccepts = 5 };
        await using TestServer host = await TestServer.StartAsync(context =>
        {
            context.Response.Write("still here"u8);
            return default;
        }, options =>
        {
            options.TransportFactory = transport;
            options.LoggerFactory = logs;
        });

        // Five failures in a row: pauses of 10, 20, 40, 80 and 160 ms, then the waiting connection is taken.
        using RawClient client = host.Connect();
        await client.SendAsync("GET / HTTP/1.1\r\nHost: test\r\n\r\n");
        (await client.ReadResponseAsync()).BodyText.ShouldBe("still here");

        logs.Entries.Count(e => e.EventId == OutOfDescriptorsEvent).ShouldBe(1);
        logs.Entries.ShouldContain(e => e.EventId == OutOfDescriptorsEvent && e.Level == LogLevel.Warning);
        logs.Entries.Count(e => e.EventId == AcceptingAgainEvent).ShouldBe(1);
        logs.Contains(AcceptFailedEvent).ShouldBeFalse();
    }
}
