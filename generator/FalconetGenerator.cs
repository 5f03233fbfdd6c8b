using System;
using System.Collections.Immutable;
using System.Threading;
using Falconet.Generator.Emitting;
using Falconet.Generator.Planning;
using Falconet.Generator.Schema;
using Microsoft.CodeAnalysis;
using Microsoft.CodeAnalysis.CSharp;
using Microsoft.CodeAnalysis.Diagnostics;
using Microsoft.CodeAnalysis.Text;

namespace Falconet.Generator;

/// <summary>
/// Reads the default header schema and every AdditionalFiles item named *.headers.json, and emits
/// KnownMethods, KnownVersions, RequestHeaders, ResponseHeaders and their shared HeaderHelpers.
/// </summary>
[Generator(LanguageNames.CSharp)]
public sealed class FalconetGenerator : IIncrementalGenerator
{
    /// <summary>The suffix that marks an AdditionalFiles item as a header schema.</summary>
    public const string SchemaFileSuffix = ".headers.json";

    // No byte order mark: the emitted files are also committed under generated/ and compared as text.
    private static readonly System.Text.Encoding s_utf8 = new System.Text.UTF8Encoding(encoderShouldEmitUTF8Identifier: false);

    /// <summary>The generator version written at the top of every emitted file.</summary>
    public static readonly string Version = ReadVersion();

    public void Initialize(IncrementalGeneratorInitializationContext context)
    {
        IncrementalValueProvider<GeneratorOptions> options = context.AnalyzerConfigOptionsProvider
            .Select(static (provider, _) => ReadOptions(provider.GlobalOptions))
            .WithTrackingName(TrackingNames.Options);

        IncrementalValuesProvider<SchemaFile> files = context.AdditionalTextsProvider
            .Where(static text => text.Path.EndsWith(SchemaFileSuffix, StringComparison.OrdinalIgnoreCase))
            .Select(static (text, cancellationToken) => ReadFile(text, cancellationToken))
            .WithTrackingName(TrackingNames.Schema);

        IncrementalValueProvider<SchemaResult> model = files.Collect()
            .Select(static (userFiles, _) => Merge(userFiles))
            .WithTrackingName(TrackingNames.Model);

        IncrementalValueProvider<PlanResult> plan = model
            .Select(static (result, _) => result.Model)
            .Combine(options)
            .Select(static (pair, _) => CreatePlan(pair.Left, pair.Right))
            .WithTrackingName(TrackingNames.Plan);

        IncrementalValueProvider<EquatableArray<DiagnosticInfo>> diagnostics = model
            .Combine(options)
            .Select(static (pair, _) => EquatableArray.From(pair.Left.Diagnostics.AsImmutableArray().AddRange(pair.Right.Diagnostics)))
            .WithTrackingName(TrackingNames.Diagnostics);

        context.RegisterSourceOutput(diagnostics, static (output, items) =>
        {
            foreach (DiagnosticInfo item in items)
            {
                output.ReportDiagnostic(item.ToDiagnostic());
            }
        });

        context.RegisterSourceOutput(plan, static (output, result) => Emit(output, result));
    }

    private static SchemaFile ReadFile(AdditionalText text, CancellationToken cancellationToken)
    {
        try
        {
            SourceText? source = text.GetText(cancellationToken);
            return SchemaReader.Read(text.Path, source?.ToString() ?? string.Empty);
        }
        catch (Exception exception) when (exception is not OperationCanceledException)
        {
            var failure = DiagnosticInfo.Create(DiagnosticDescriptors.InternalError, new LocationInfo(text.Path, 0, 0, 0, 0, 0, 0), "reading " + text.Path, exception.Message);
            return new SchemaFile(text.Path, default, default, default, default, EquatableArray.From(new[] { failure }));
        }
    }

    private static SchemaResult Merge(ImmutableArray<SchemaFile> userFiles)
    {
        try
        {
            return SchemaMerger.Merge(DefaultSchema.File, userFiles);
        }
        catch (Exception exception) when (exception is not OperationCanceledException)
        {
            var empty = new SchemaModel(default, default, default, default);
            return new SchemaResult(empty, EquatableArray.From(new[] { Failure("merging the header schemas", exception) }));
        }
    }

    private static PlanResult CreatePlan(SchemaModel model, GeneratorOptions options)
    {
        try
        {
            return new PlanResult(GenerationPlanner.Plan(model, options, Version), null);
        }
        catch (Exception exception) when (exception is not OperationCanceledException)
        {
            return new PlanResult(null, Failure("planning the matchers", exception));
        }
    }

    private static void Emit(SourceProductionContext output, PlanResult result)
    {
        if (result.Failure is not null)
        {
            output.ReportDiagnostic(result.Failure.ToDiagnostic());
            return;
        }

        try
        {
            foreach (EmittedFile file in Emitter.Emit(result.Plan!))
            {
                output.AddSource(file.HintName, SourceText.From(file.Text, s_utf8));
            }
        }
        catch (Exception exception) when (exception is not OperationCanceledException)
        {
            output.ReportDiagnostic(Failure("emitting the source files", exception).ToDiagnostic());
        }
    }

    /// <summary>Reads FalconetNamespace (else RootNamespace, else Falconet.Generated) and FalconetVisibility.</summary>
    public static GeneratorOptions ReadOptions(AnalyzerConfigOptions options)
    {
        var diagnostics = ImmutableArray.CreateBuilder<DiagnosticInfo>();
        string ns = GeneratorOptions.DefaultNamespace;
        if (options.TryGetValue("build_property.FalconetNamespace", out string? configured) && !string.IsNullOrWhiteSpace(configured))
        {
            if (IsNamespace(configured.Trim()))
            {
                ns = configured.Trim();
            }
            else
            {
                diagnostics.Add(DiagnosticInfo.Create(DiagnosticDescriptors.InvalidOption, LocationInfo.None, "FalconetNamespace", configured, "using " + ns));
            }
        }
        else if (options.TryGetValue("build_property.RootNamespace", out string? root) && !string.IsNullOrWhiteSpace(root) && IsNamespace(root.Trim()))
        {
            ns = root.Trim();
        }

        string visibility = "public";
        if (options.TryGetValue("build_property.FalconetVisibility", out string? configuredVisibility) && !string.IsNullOrWhiteSpace(configuredVisibility))
        {
            string value = configuredVisibility.Trim();
            if (string.Equals(value, "internal", StringComparison.OrdinalIgnoreCase))
            {
                visibility = "internal";
            }
            else if (!string.Equals(value, "public", StringComparison.OrdinalIgnoreCase))
            {
                diagnostics.Add(DiagnosticInfo.Create(DiagnosticDescriptors.InvalidOption, LocationInfo.None, "FalconetVisibility", configuredVisibility, "using public"));
            }
        }

        return new GeneratorOptions(ns, visibility, new EquatableArray<DiagnosticInfo>(diagnostics.ToImmutable()));
    }

    private static bool IsNamespace(string text)
    {
        foreach (string part in text.Split('.'))
        {
            if (!SyntaxFacts.IsValidIdentifier(part) || SyntaxFacts.GetKeywordKind(part) != SyntaxKind.None)
            {
                return false;
            }
        }

        return true;
    }

    private static DiagnosticInfo Failure(string step, Exception exception) =>
        DiagnosticInfo.Create(DiagnosticDescriptors.InternalError, LocationInfo.None, step, exception.GetType().Name + ": " + exception.Message);

    private static string ReadVersion()
    {
        Version? version = typeof(FalconetGenerator).Assembly.GetName().Version;
        return version is null ? "0.0.0" : version.ToString(3);
    }

    /// <summary>A plan, or the diagnostic that explains why none could be made.</summary>
    private sealed record PlanResult(GenerationPlan? Plan, DiagnosticInfo? Failure);
}
