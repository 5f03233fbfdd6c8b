using System;
using System.Globalization;

namespace Falconet.Benchmarks.Parsing;

/// <summary>The HPACK comparisons in alternating rounds (see <see cref="AlternatingRounds"/>), which hold their ratio on a busy machine.</summary>
public static class HPackInterleaved
{
    /// <summary>Prints the fastest and median round of Falconet's and Kestrel's decoders for each block, and their ratio.</summary>
    public static void Run(int rounds = 150, int operationsPerRound = 20_000)
    {
        RunHuffman(rounds, operationsPerRound);
        foreach (string response in new[] { "Warm", "First" })
        {
            var huffman = new HPackEncoderBenchmarks { Response = response, Huffman = true };
            var raw = new HPackEncoderBenchmarks { Response = response, Huffman = false };
            huffman.Setup();
            raw.Setup();
            int huffmanBytes = huffman.Encode();
            int rawBytes = raw.Encode();
            AlternatingRounds.Result[] e = AlternatingRounds.Run([("huffman", huffman.Encode), ("raw", raw.Encode)], rounds, operationsPerRound, out long sum);
            Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
                $"hpack encode {response}: Huffman {e[0].Fastest:F1} ns, {huffmanBytes} bytes; raw {e[1].Fastest:F1} ns, {rawBytes} bytes; {(double)(e[0].AllocatedBytes + e[1].AllocatedBytes) / (2L * rounds * operationsPerRound):F1} B/op (checksum {sum})"));
        }

        foreach (string request in new[] { "First", "Repeated" })
        {
            var comparison = new HPackDecoderComparison { Request = request };
            comparison.Setup();
            AlternatingRounds.Result[] r = AlternatingRounds.Run(
                [("kestrel", comparison.Kestrel), ("falconet", comparison.Falconet)],
                rounds, operationsPerRound, out long checksum);
            Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
                $"hpack decode {request}: Kestrel {r[0].Fastest:F1} ns (median {r[0].Median:F1}, {(double)r[0].AllocatedBytes / (rounds * operationsPerRound):F1} B/op), Falconet {r[1].Fastest:F1} ns (median {r[1].Median:F1}, {(double)r[1].AllocatedBytes / (rounds * operationsPerRound):F1} B/op): {r[0].Fastest / r[1].Fastest:F2}x faster (checksum {checksum})"));
        }
    }

    /// <summary>Prints the fastest and median round of each Huffman decoder over a browser request's strings.</summary>
    public static void RunHuffman(int rounds = 150, int operationsPerRound = 20_000)
    {
        var huffman = new HuffmanDecodeComparison();
        huffman.Setup();
        AlternatingRounds.Result[] r = AlternatingRounds.Run(
            [("kestrel", huffman.Kestrel), ("window", huffman.Window), ("fourbit", huffman.FourBit)], rounds, operationsPerRound, out long checksum);
        Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"huffman decode: Kestrel {r[0].Fastest:F1} ns (median {r[0].Median:F1}), 12-bit windows {r[1].Fastest:F1} ns (median {r[1].Median:F1}), 4-bit machine {r[2].Fastest:F1} ns (median {r[2].Median:F1}) (checksum {checksum})"));
    }

    /// <summary>
    /// The variants named (see <see cref="Operation"/>) in alternating rounds of <paramref name="operationsPerRound"/>
    /// operations, timed by the thread's CPU time (CLOCK_THREAD_CPUTIME_ID), so time the thread spends preempted by other
    /// processes does not count: on a machine loaded far past its cores, the fastest round still shows the code. Prints
    /// the fastest and median round of each, in nanoseconds per operation.
    /// </summary>
    public static void CpuTime(string request, string[] variants, int rounds = 400, int operationsPerRound = 2_000)
    {
        var operations = new Func<int>[variants.Length];
        for (int v = 0; v < variants.Length; v++)
        {
            operations[v] = Operation(variants[v], request);
        }

        long checksum = 0;
        var times = new double[variants.Length][];
        for (int v = 0; v < variants.Length; v++)
        {
            times[v] = new double[rounds];
            for (int i = 0; i < 50_000; i++)
            {
                checksum += operations[v]();
            }
        }

        for (int round = 0; round < rounds; round++)
        {
            for (int v = 0; v < variants.Length; v++)
            {
                Func<int> operation = operations[v];
                long start = ThreadCpuNanoseconds();
                for (int i = 0; i < operationsPerRound; i++)
                {
                    checksum += operation();
                }

                times[v][round] = (double)(ThreadCpuNanoseconds() - start) / operationsPerRound;
            }
        }

        var line = new System.Text.StringBuilder(request + ":");
        for (int v = 0; v < variants.Length; v++)
        {
            Array.Sort(times[v]);
            line.Append(CultureInfo.InvariantCulture, $" {variants[v]} {times[v][0]:F1} ns (median {times[v][rounds / 2]:F1})");
        }

        Console.WriteLine(line.Append(CultureInfo.InvariantCulture, $" (thread CPU time, fastest of {rounds} rounds; checksum {checksum})").ToString());
    }

    private static long ThreadCpuNanoseconds()
    {
        ClockGetTime(3 /* CLOCK_THREAD_CPUTIME_ID */, out TimeSpec time);
        return (time.Seconds * 1_000_000_000L) + time.Nanoseconds;
    }

    [System.Runtime.InteropServices.DllImport("libc", EntryPoint = "clock_gettime")]
    private static extern int ClockGetTime(int clock, out TimeSpec time);

    private struct TimeSpec
    {
        public long Seconds;
        public long Nanoseconds;
    }

    /// <summary>
    /// <c>--hpack-count VARIANT REQUEST N</c>: warms one variant up (50,000 operations, so the measured ones run the JIT's
    /// final code), prints "ready" and waits for a line on standard input, runs it <paramref name="operations"/> times,
    /// prints "done operations=N" and waits for another line: <c>benchmarks/hpack-callgrind.sh</c> counts the
    /// instructions in between with callgrind, a figure the load of a shared machine does not move.
    /// </summary>
    public static void Count(string variant, string request, int operations)
    {
        Func<int> operation = Operation(variant, request);
        long checksum = 0;
        for (int i = 0; i < 50_000; i++)
        {
            checksum += operation();
        }

        Console.WriteLine("ready");
        Console.ReadLine();
        for (int i = 0; i < operations; i++)
        {
            checksum += operation();
        }

        Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"done operations={operations} checksum={checksum}"));
        Console.ReadLine();
    }

    private static Func<int> Operation(string variant, string request)
    {
        if (variant.StartsWith("huffman-", StringComparison.Ordinal))
        {
            var huffman = new HuffmanDecodeComparison();
            huffman.Setup();
            return variant switch
            {
                "huffman-window" => huffman.Window,
                "huffman-fourbit" => huffman.FourBit,
                "huffman-kestrel" => huffman.Kestrel,
                _ => throw new ArgumentException("Unknown variant: " + variant, nameof(variant)),
            };
        }

        if (variant.StartsWith("encode-", StringComparison.Ordinal))
        {
            // encode-huffman or encode-raw; the request names the response: Warm or First.
            var encoder = new HPackEncoderBenchmarks { Response = request, Huffman = variant == "encode-huffman" };
            encoder.Setup();
            return encoder.Encode;
        }

        var comparison = new HPackDecoderComparison { Request = request };
        comparison.Setup();
        return variant switch
        {
            "kestrel" => comparison.Kestrel,
            "falconet" => comparison.Falconet,
            "storing" => comparison.StoringAlone,
            _ => throw new ArgumentException("Unknown variant: " + variant, nameof(variant)),
        };
    }
}
