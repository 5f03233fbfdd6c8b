using Falconet.Transport;
using Falconet.Transport.Libuv;

namespace Falconet.Runtime.Tests.Transport;

/// <summary>The loop transport tests on libuv.</summary>
public sealed class LibuvTransportTests : LoopTransportTests
{
    private protected override TransportUnderTest Transport => TransportUnderTest.Libuv;

    private protected override ITransportFactory CreateFactory(int loops) => new LibuvTransportFactory(new LibuvTransportOptions { LoopCount = loops, TrackLeaks = true });

    private protected override bool IsNoDelay(TransportConnection connection) => ((LibuvConnection)connection).IsNoDelay;

    private protected override (int LoopsRunning, int OpenConnections) LoopState(ITransportFactory factory)
        => (((LibuvTransportFactory)factory).LoopsRunning, ((LibuvTransportFactory)factory).OpenConnections);
}
