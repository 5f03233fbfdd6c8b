using System;
using System.Linq;
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

    [Theory]
    [InlineData(TlsEngine.SslStream)]
    [InlineData(TlsEngine.OpenSsl)]
    public async Task Mutated_inputs_never_crash_hang_leak_or_answer_a_corrupted_request(TlsEngine engine)
    {
        await using TlsFuzzTarget target = await TlsFuzzTarget.StartAsync(engine);
        var fuzzer = new MutationFuzzer(TlsFuzzSeeds.All, randomSeed: 12);
        for (int i = 0; i < 3_000; i++)
        {
            byte[] input = fuzzer.Next();
            Holds(() => target.Run(input), $"Input {i} ({Convert.ToHexString(input)})");
        }
    }

    [Theory]
    [InlineData(TlsEngine.SslStream, true)]
    [InlineData(TlsEngine.SslStream, false)]
    [InlineData(TlsEngine.OpenSsl, true)]
    [InlineData(TlsEngine.OpenSsl, false)]
    public async Task Every_corruption_across_the_handshake_and_the_requests_ends_the_connection_without_answering_what_it_reached(TlsEngine engine, bool tls13)
    {
        await using TlsFuzzTarget target = await TlsFuzzTarget.StartAsync(engine, trackLeaks: true);
        WireCorruption[] corruptions = [WireCorruption.FlipBit, WireCorruption.Truncate, WireCorruption.DuplicateRecord, WireCorruption.InsertGarbage];

        // The client writes well under 1,400 bytes with three requests: the last offsets corrupt nothing, and the answers must be exact.
        for (int offset = 0; offset < 1_400; offset += 29)
        {
            foreach (WireCorruption corruption in corruptions)
            {
                var plan = new WirePlan(corruption, offset, (byte)(offset / 29), [0x81, 0, 7]);
                Holds(() => target.RunHandshake(tls13, requests: 3, separateWrites: true, plan), plan.ToString());
            }
        }
    }

    [Theory]
    [InlineData(TlsEngine.SslStream)]
    [InlineData(TlsEngine.OpenSsl)]
    public async Task A_ClientHello_cut_at_every_byte_is_refused_without_a_leak_or_a_call_of_the_application(TlsEngine engine)
    {
        await using TlsFuzzTarget target = await TlsFuzzTarget.StartAsync(engine, trackLeaks: true);
        foreach ((string name, byte[] seed) in TlsFuzzSeeds.All.Where(seed => seed.Name.StartsWith("raw-openssl-", StringComparison.Ordinal)))
        {
            for (int cut = 0; cut < seed.Length - 1; cut++)
            {
                Holds(() => target.RunRaw([seed.AsMemory(1, cut)]), $"{name} cut after {cut} bytes");
            }
        }
    }

    /// <summary>
    /// Found by afl++ on the OpenSSL engine (the first crash of its first run): libssl writes the protocol_version alert
    /// that refuses a ClientHello offering version 0.0 in a record of version 0.0, on both engines (SslStream runs the same
    /// library). That is the library's choice and clients read it; the target's record check now accepts any version on
    /// an alert and still requires 3.x on every other record.
    /// </summary>
    [Theory]
    [InlineData(TlsEngine.SslStream)]
    [InlineData(TlsEngine.OpenSsl)]
    public async Task A_ClientHello_offering_version_0_0_is_refused_with_one_alert_and_the_connection_closes(TlsEngine engine)
    {
        await using TlsFuzzTarget target = await TlsFuzzTarget.StartAsync(engine, trackLeaks: true);
        byte[] hello = TlsFuzzSeeds.All.Single(seed => seed.Name == "raw-openssl-tls12-sni-alpn").Bytes[1..];
        hello[9] = 0;
        hello[10] = 0;

        byte[] sent = target.RunRaw([hello]).ToArray();

        sent.Length.ShouldBe(7);
        sent[0].ShouldBe((byte)21);
        sent[3..5].ShouldBe(new byte[] { 0, 2 });
        sent[5].ShouldBe((byte)2, "a fatal alert");
    }

    private static void Holds(Action run, string input)
    {
        try
        {
            run();
        }
        catch (FuzzPropertyException exception)
        {
            throw new ShouldAssertException($"{input} broke a property: {exception.Message}", exception);
        }
    }
}
