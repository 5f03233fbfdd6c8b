using System;
using System.Text;
using System.Threading.Tasks;
using Falconet.Fuzz;
using Falconet.Server;
using Shouldly;

namespace Falconet.Http.Tests.Tls;

/// <summary>
/// The TLS fuzz target (<see cref="TlsFuzzTarget"/>) on both engines: a bounded run of the mutation fuzzer, and the
/// deterministic runs it is built from (exact answers without corruption, every corruption across the client's bytes,
/// ClientHellos cut at every byte).
/// </summary>
public sealed class TlsFuzzingTests
{
    [Theory]
    [InlineData(TlsEngine.SslStream, true)]
    [InlineData(TlsEngine.SslStream, false)]
    [InlineData(TlsEngine.OpenSsl, true)]
    [InlineData(TlsEngine.OpenSsl, false)]
    public async Task Requests_over_a_real_handshake_received_in_one_byte_pieces_get_exactly_the_plaintext_servers_answers(TlsEngine engine, bool tls13)
    {
        await using TlsFuzzTarget target = await TlsFuzzTarget.StartAsync(engine, trackLeaks: true);

        var answers = target.RunHandshake(tls13, requests: 3, separateWrites: true, new WirePlan(WireCorruption.None, 0, 0, [0x80]));

        answers.Count.ShouldBe(3);
        answers[1].Body.ShouldStartWith("POST /second ");
        answers[1].Body.ShouldEndWith("body 5\nhello");
    }
}
