using System.Collections.Generic;
using System.Linq;
using Falconet.Http.Parsing.Tests.Support;

namespace Falconet.Fuzz;

/// <summary>The seed corpus: every request of the parser's request suite, valid and invalid, and a few pipelined batches of them.</summary>
public static class FuzzSeeds
{
    /// <summary>The valid requests of the suite, each as bytes.</summary>
    public static IReadOnlyList<byte[]> Valid { get; } = [.. RequestSuite.Valid.Values.Select(v => RequestSuite.Bytes(v.Request))];

    /// <summary>The invalid requests of the suite, each as bytes.</summary>
    public static IReadOnlyList<byte[]> Invalid { get; } = [.. RequestSuite.Invalid.Values.Select(v => RequestSuite.Bytes(v.Request))];

    // After Valid and Invalid, which it is built from.
    /// <summary>The seeds, by a stable file-safe name.</summary>
    public static IReadOnlyList<(string Name, byte[] Bytes)> All { get; } = Build();

    private static List<(string, byte[])> Build()
    {
        var seeds = new List<(string, byte[])>();
        int index = 0;
        foreach (byte[] request in RequestSuite.AllRequests())
        {
            seeds.Add(($"suite-{index++:D3}", request));
        }

        // Pipelined: complete requests back to back, then one refused request followed by one that must never be answered.
        byte[][] valid = [.. Valid];
        for (int i = 0; i + 2 < valid.Length; i += 3)
        {
            seeds.Add(($"pipelined-{i:D3}", [.. valid[i], .. valid[i + 1], .. valid[i + 2]]));
        }

        for (int i = 0; i < Invalid.Count; i += 7)
        {
            seeds.Add(($"refused-then-more-{i:D3}", [.. valid[i % valid.Length], .. Invalid[i], .. "GET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n"u8]));
        }

        return seeds;
    }
}
