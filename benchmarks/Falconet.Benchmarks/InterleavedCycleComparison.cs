using System;
using System.Diagnostics;
using System.Globalization;

namespace Falconet.Benchmarks;

/// <summary>
/// The 8-header cycle against the Dictionary, measured so that a busy machine cannot skew the ratio: the two run in
/// alternating short rounds in one process, so load from other processes lands on both alike. Prints the fastest and
/// the median round of each, their ratios, and the bytes the generated cycle allocated over all its rounds.
/// </summary>
public static class InterleavedCycleComparison
{
    /// <summary>Runs the comparison and prints one line per figure.</summary>
    public static void Run(int rounds = 200, int cyclesPerRound = 20_000)
    {
        var benchmarks = new RequestHeadersCycleBenchmarks();
        var dictionary = new double[rounds];
        var generated = new double[rounds];
        long checksum = 0;

        // Warm-up, so both run optimized (tiered) code before the first measured round.
        for (int i = 0; i < 200_000; i++)
        {
            checksum += benchmarks.Dictionary() + benchmarks.Generated();
        }

        long allocated = 0;
        for (int round = 0; round < rounds; round++)
        {
            long start = Stopwatch.GetTimestamp();
            for (int i = 0; i < cyclesPerRound; i++)
            {
                checksum += benchmarks.Dictionary();
            }

            dictionary[round] = Stopwatch.GetElapsedTime(start).TotalNanoseconds / cyclesPerRound;
            long before = GC.GetAllocatedBytesForCurrentThread();
            start = Stopwatch.GetTimestamp();
            for (int i = 0; i < cyclesPerRound; i++)
            {
                checksum -= benchmarks.Generated();
            }

            generated[round] = Stopwatch.GetElapsedTime(start).TotalNanoseconds / cyclesPerRound;
            allocated += GC.GetAllocatedBytesForCurrentThread() - before;
        }

        Array.Sort(dictionary);
        Array.Sort(generated);
        double dictionaryMedian = dictionary[rounds / 2];
        double generatedMedian = generated[rounds / 2];
        Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"""
            8-header cycle, {rounds} alternating rounds of {cyclesPerRound:N0} cycles (checksum {checksum})
            Dictionary<string, StringValues>: fastest {dictionary[0]:F1} ns, median {dictionaryMedian:F1} ns
            generated RequestHeaders:          fastest {generated[0]:F1} ns, median {generatedMedian:F1} ns, {allocated} bytes allocated in all rounds
            speed-up: {dictionary[0] / generated[0]:F2}x on the fastest rounds, {dictionaryMedian / generatedMedian:F2}x on the medians
            """));
    }
}
