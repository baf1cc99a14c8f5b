// ModuleList, ModuleDict and Sequential with libtorch's surface: adding
// (holders, shared_ptrs, values, AnyModules), reading back (operator[],
// ptr, ptr<T>, at<T>), insert/extend/update/pop, forwards that are not
// Tensor -> Tensor, clones, and the errors.
#include "../test_util.h"

namespace brasa {
namespace {

// Two inputs: Sequential passes them to its first module.
struct AddImpl : nn::Cloneable<AddImpl> {
  AddImpl() : Cloneable("Add") {}
  void reset() override {}
  Tensor forward(const Tensor& a, const Tensor& b) { return a + b; }
};
TORCH_MODULE(Add);

// A tuple out: Sequential returns it from forward<std::tuple<...>>.
struct SplitImpl : nn::Cloneable<SplitImpl> {
  SplitImpl() : Cloneable("Split") {}
  void reset() override {}
  std::tuple<Tensor, Tensor> forward(const Tensor& x) { return {x * 2, x * 3}; }
};
TORCH_MODULE(Split);

std::vector<std::string> child_names(const nn::Module& m) { return m.named_children().keys(); }

TEST(ModuleList, AddsEveryFormAndReadsBackByPositionAndType) {
  nn::ModuleList list(nn::Linear(2, 3), std::make_shared<nn::ReLUImpl>());
  list->push_back(nn::LinearImpl(3, 4));
  list->push_back(nn::Tanh());
  EXPECT_EQ(list->size(), 4u);
  EXPECT_FALSE(list->is_empty());
  EXPECT_TRUE(nn::ModuleList()->is_empty());
  EXPECT_EQ(child_names(*list), (std::vector<std::string>{"0", "1", "2", "3"}));
  EXPECT_EQ(list->parameters().size(), 4u);

  // libtorch's spellings: list[i] on the holder, ->as<Holder>(), ptr<T>, at<T>.
  nn::LinearImpl* second = list[2]->as<nn::Linear>();
  ASSERT_NE(second, nullptr);
  EXPECT_EQ(second->options.out_features_, 4);
  EXPECT_EQ(list->ptr<nn::LinearImpl>(0)->options.out_features_, 3);
  EXPECT_EQ(list->ptr<nn::LinearImpl>(1), nullptr);
  EXPECT_EQ(&list->at<nn::LinearImpl>(2), second);
  EXPECT_EQ(list->ptr(3)->name(), "Tanh");

  Tensor x = ones({1, 2});
  for (const auto& module : *list) {
    if (auto* fc = module->as<nn::Linear>()) x = fc->forward(x);
  }
  EXPECT_SHAPE(x, {1, 4});

  EXPECT_ERROR("ModuleList: index 4 is out of range for 4 modules", list->ptr(4));
  EXPECT_ERROR("ModuleList: index 9 is out of range", list[9]);
  EXPECT_ERROR("ModuleList::at: the module at index 1 is a ReLU, not the type asked for",
               list->at<nn::LinearImpl>(1));
  EXPECT_ERROR("ModuleList::push_back: the module is null",
               list->push_back(std::shared_ptr<nn::Module>()));
}

TEST(ModuleList, InsertKeepsNamesInPositionOrderAndExtendAppends) {
  nn::ModuleList list(nn::Linear(1, 1), nn::Linear(2, 2));
  list->insert(1, nn::Linear(5, 5));
  list->insert(0, nn::ReLU());
  list->insert(list->size(), nn::Tanh());
  EXPECT_EQ(child_names(*list), (std::vector<std::string>{"0", "1", "2", "3", "4"}));
  std::vector<std::string> kinds;
  for (const auto& m : *list) kinds.push_back(m->name());
  EXPECT_EQ(kinds, (std::vector<std::string>{"ReLU", "Linear", "Linear", "Linear", "Tanh"}));
  EXPECT_EQ(list->at<nn::LinearImpl>(2).options.in_features_, 5);
  // The parameters follow the positions too: 1.weight is the 1x1 layer's.
  EXPECT_SHAPE(list->named_parameters()["2.weight"], {5, 5});
  EXPECT_SHAPE(list->named_parameters()["1.weight"], {1, 1});
  EXPECT_ERROR("ModuleList::insert: index 7 is out of range for 5 modules",
               list->insert(7, nn::ReLU()));

  nn::ModuleList more;
  more->extend(std::vector<nn::Linear>{nn::Linear(3, 3), nn::Linear(4, 4)});
  more->extend(*list);
  EXPECT_EQ(more->size(), 7u);
  EXPECT_EQ(more[6]->name(), "Tanh");
  // Extending shares the modules, as libtorch does.
  EXPECT_EQ(more->ptr(3), list->ptr(1));
}

TEST(ModuleDict, InsertReplacesUpdatePopAndClear) {
  nn::ModuleDict dict(std::vector<std::pair<std::string, std::shared_ptr<nn::Module>>>{
      {"encoder", std::make_shared<nn::LinearImpl>(4, 3)},
      {"act", std::make_shared<nn::ReLUImpl>()}});
  EXPECT_EQ(dict->size(), 2u);
  EXPECT_FALSE(dict->empty());
  EXPECT_EQ(dict->at<nn::LinearImpl>("encoder").options.in_features_, 4);
  EXPECT_EQ(dict["act"]->name(), "ReLU");

  dict->insert("act", nn::Tanh());  // replaces, keeps the position
  dict->insert("decoder", nn::LinearImpl(3, 4));
  EXPECT_EQ(dict->keys(), (std::vector<std::string>{"encoder", "act", "decoder"}));
  EXPECT_EQ(dict["act"]->name(), "Tanh");
  EXPECT_EQ(dict->values().size(), 3u);
  EXPECT_EQ(dict->parameters().size(), 4u);

  OrderedDict<std::string, std::shared_ptr<nn::Module>> extra;
  extra.insert("head", std::make_shared<nn::LinearImpl>(4, 2));
  dict->update(extra);
  std::vector<std::string> seen;
  for (const auto& item : *dict) seen.push_back(item.key() + "=" + item.value()->name());
  EXPECT_EQ(seen, (std::vector<std::string>{"encoder=Linear", "act=Tanh", "decoder=Linear",
                                            "head=Linear"}));
  auto items = dict->items();
  ASSERT_EQ(items.size(), 4u);
  EXPECT_EQ(items[3].first, "head");

  auto decoder = dict->pop("decoder");
  EXPECT_EQ(decoder->name(), "Linear");
  EXPECT_FALSE(dict->contains("decoder"));
  EXPECT_EQ(dict->parameters().size(), 4u);  // encoder and head
  EXPECT_ERROR("ModuleDict: no module under key 'decoder' (keys: encoder, act, head)",
               dict["decoder"]);
  EXPECT_ERROR("ModuleDict::at: the module at key 'act' is a Tanh, not the type asked for",
               dict->at<nn::LinearImpl>("act"));
  EXPECT_ERROR("ModuleDict::insert: the module is null",
               dict->insert("none", std::shared_ptr<nn::Module>()));
  dict->clear();
  EXPECT_TRUE(dict->empty());
  EXPECT_TRUE(dict->parameters().empty());
}

TEST(ModuleDict, CloneCopiesEveryItem) {
  nn::ModuleDict dict;
  dict->insert("fc", nn::Linear(2, 2));
  auto copy = std::dynamic_pointer_cast<nn::ModuleDictImpl>(dict->clone());
  ASSERT_TRUE(copy);
  EXPECT_NE((*copy)["fc"], dict["fc"]);
  EXPECT_TRUE(copy->at<nn::LinearImpl>("fc").weight.equal(dict->at<nn::LinearImpl>("fc").weight));
}

TEST(Sequential, NamedModulesAndIndexing) {
  manual_seed(0);
  nn::Sequential seq(
      {{"fc", nn::Linear(3, 4)}, {"act", nn::ReLU()}, {"out", nn::LinearImpl(4, 2)}});
  EXPECT_EQ(child_names(*seq), (std::vector<std::string>{"fc", "act", "out"}));
  EXPECT_EQ(seq->size(), 3u);
  EXPECT_FALSE(seq->is_empty());
  auto& fc = seq->at<nn::LinearImpl>(0);
  auto out = seq->ptr<nn::LinearImpl>(2);
  ASSERT_TRUE(out);
  EXPECT_EQ(seq[1]->name(), "ReLU");
  Tensor x = randn({5, 3});
  EXPECT_TRUE(seq->forward(x).equal(out->forward(relu(fc.forward(x)))));
  EXPECT_TRUE(seq(x).equal(seq->forward(x)));

  std::vector<std::string> kinds;
  for (auto& module : *seq) kinds.push_back(module.ptr()->name());
  EXPECT_EQ(kinds, (std::vector<std::string>{"Linear", "ReLU", "Linear"}));

  EXPECT_ERROR("Sequential: index 3 is out of range for 3 modules", seq[3]);
  EXPECT_ERROR("Sequential::at: the module at index 1 is a ReLU", seq->at<nn::LinearImpl>(1));
  EXPECT_ERROR("Cannot call forward() on an empty Sequential", nn::Sequential()->forward(x));
  EXPECT_ERROR("Sequential::push_back: the module 'gap' is empty",
               seq->push_back("gap", nn::AnyModule()));
  EXPECT_ERROR("ModuleList::insert: the module is null",
               nn::ModuleList()->insert(0, std::shared_ptr<nn::Module>()));
}

TEST(Sequential, ForwardsThatAreNotTensorToTensorGoThroughAnyModule) {
  manual_seed(0);
  // Two inputs into the first module.
  nn::Sequential add_then_scale(Add(), nn::Linear(2, 2));
  Tensor a = randn({3, 2}), b = randn({3, 2});
  auto& fc = add_then_scale->at<nn::LinearImpl>(1);
  EXPECT_TRUE(add_then_scale->forward(a, b).equal(fc.forward(a + b)));

  // A tuple out of the last module, asked for by type.
  nn::Sequential split;
  split->push_back(nn::Tanh());
  split->push_back("split", Split());
  auto [twice, thrice] = split->forward<std::tuple<Tensor, Tensor>>(a);
  EXPECT_TRUE(twice.equal(a.tanh() * 2));
  EXPECT_TRUE(thrice.equal(a.tanh() * 3));
  EXPECT_ERROR("Attempted to cast AnyValue to", split->forward(a));

  // An AnyModule item, and a Sequential inside a Sequential.
  nn::Sequential inner(nn::Linear(2, 2), nn::Sigmoid());
  nn::Sequential outer;
  outer->push_back(nn::AnyModule(nn::Linear(2, 2)));
  outer->push_back("inner", inner);
  auto& first = outer->at<nn::LinearImpl>(0);
  EXPECT_TRUE(outer->forward(a).equal(inner->forward(first.forward(a))));
  EXPECT_EQ(outer->parameters().size(), 4u);

  nn::Sequential extended;
  extended->extend(*outer);
  EXPECT_EQ(extended->size(), 2u);
  EXPECT_TRUE(extended->forward(a).equal(outer->forward(a)));
}

TEST(Sequential, CloneCopiesEveryStepIncludingAnyModules) {
  manual_seed(0);
  nn::Sequential seq;
  seq->push_back(nn::AnyModule(nn::Linear(2, 3)));
  seq->push_back(nn::Sequential(nn::ReLU(), nn::Linear(3, 2)));
  seq->push_back(nn::Tanh());
  auto copy = std::dynamic_pointer_cast<nn::SequentialImpl>(seq->clone());
  ASSERT_TRUE(copy);
  Tensor x = randn({4, 2});
  EXPECT_TRUE(copy->forward(x).equal(seq->forward(x)));
  // The copy's steps are its own modules: changing it leaves the original.
  {
    NoGradGuard no_grad;
    copy->at<nn::LinearImpl>(0).weight.zero_();
  }
  EXPECT_FALSE(copy->forward(x).equal(seq->forward(x)));
  auto copied_params = copy->parameters();
  auto params = seq->parameters();
  ASSERT_EQ(copied_params.size(), params.size());
  for (size_t i = 0; i < params.size(); ++i)
    EXPECT_NE(copied_params[i].data_ptr(), params[i].data_ptr());
  // What forward calls is what parameters() holds.
  EXPECT_TRUE(copy->ptr<nn::LinearImpl>(0)->weight.is_same(copied_params[0]));
}

}  // namespace
}  // namespace brasa
