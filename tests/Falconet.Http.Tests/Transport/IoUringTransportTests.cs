using System.Collections.Generic;
using System.Net;
using System.Net.Sockets;
using System.Threading.Tasks;
using Falconet.Http.Tests.Infrastructure;
using Falconet.Server;
using Falconet.Transport;
using Falconet.Transport.IoUring;
using Shouldly;

namespace Falconet.Http.Tests.Transport;

/// <summary>The loop transport tests on io_uring, and its own errors.</summary>
public sealed class IoUringTransportTests : LoopTransportTests
{
    protected override TransportKind Transport => TransportKind.IoUring;

    protected override string LoopThreadPrefix => "falconet-uring-";

    protected override ITransportFactory CreateTransport(int loops, IoScheduling? scheduling)
        => new IoUringTransportFactory(new IoUringTransportOptions { LoopCount = loops, Scheduling = scheduling ?? IoScheduling.IoThreads, TrackLeaks = true });

    protected override IReadOnlyList<long> AcceptedPerLoop(ITransportFactory transport) => ((IoUringTransportFactory)transport).AcceptedPerLoop;

    protected override int LoopsRunning(ITransportFactory transport) => ((IoUringTransportFactory)transport).LoopsRunning;

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task A_port_in_use_is_an_error_that_names_it()
    {
        using var taken = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        taken.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        taken.Listen();
        var options = new FalconetServerOptions { Transport = TransportKind.IoUring, IoThreadCount = 2 };
        options.Endpoints.Add((IPEndPoint)taken.LocalEndPoint!);
        await using var server = new FalconetServer(options, Hello);

        SocketException error = await Should.ThrowAsync<SocketException>(() => server.StartAsync());
        error.SocketErrorCode.ShouldBe(SocketError.AddressAlreadyInUse);
    }
}
